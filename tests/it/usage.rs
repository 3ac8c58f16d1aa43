//! The README's usage section is the real `--help` (STYLE habit 14, after lychee's
//! `tests/usage.rs`).

use crate::support::{plikt, root};

#[test]
fn readme_shows_the_current_validate_help() {
    let help = plikt()
        .args(["validate", "--help"])
        .output()
        .expect("run plikt");
    let help = String::from_utf8(help.stdout).expect("utf-8");
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let marker = "<!-- usage: validate";
    let start = readme.find(marker).expect("usage marker in README");
    let block = &readme[start..];
    let body_start = block.find("```text\n").expect("code block") + "```text\n".len();
    let body_end = body_start + block[body_start..].find("\n```").expect("end of block");
    assert_eq!(
        block[body_start..body_end].trim_end(),
        help.trim_end(),
        "update README.md with `plikt validate --help`"
    );
}

#[test]
fn readme_documents_every_exit_code() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    for code in ["| 0 |", "| 1 |", "| 2 |"] {
        assert!(
            readme.contains(code),
            "README lacks the exit code row {code}"
        );
    }
}

#[test]
fn readme_example_output_is_what_plikt_prints() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let marker = "$ plikt validate fixtures/feeds/sample-typical-mistakes.xml\n";
    let start = readme.find(marker).expect("example in README") + marker.len();
    let shown = &readme[start..start + readme[start..].find("\n```").expect("end of example")];
    let out = plikt()
        .args([
            "validate",
            "--color",
            "never",
            "fixtures/feeds/sample-typical-mistakes.xml",
        ])
        .current_dir(root())
        .output()
        .expect("run plikt");
    assert_eq!(out.status.code(), Some(1));
    let printed = String::from_utf8(out.stdout).expect("utf-8");
    assert_eq!(
        shown.trim_end(),
        printed.trim_end(),
        "update the README's example output"
    );
}

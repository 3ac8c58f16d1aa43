use super::*;

/// Reads the whole document; returns the G-XML error if any.
fn read_all(doc: &str) -> Result<Vec<String>, XmlError> {
    let mut r = XmlReader::new(doc.as_bytes(), ReaderLimits::default());
    let mut names = Vec::new();
    loop {
        match r.read_event() {
            Ok(XmlEvent::Start(s)) => names.push(format!("{}@{}", s.local, s.pos)),
            Ok(XmlEvent::Eof) => return Ok(names),
            Ok(_) => {}
            Err(ReadError::Malformed(e)) => return Err(e),
            Err(ReadError::Io(e)) => panic!("io: {e}"),
        }
    }
}

fn kind(doc: &str) -> Malformed {
    read_all(doc).expect_err("should be malformed").kind
}

#[test]
fn unbound_element_prefix_is_malformed() {
    assert_eq!(
        kind("<rss><dc:title/></rss>"),
        Malformed::UnboundPrefix("dc".into())
    );
}

#[test]
fn unbound_attribute_prefix_is_malformed() {
    assert_eq!(
        kind("<rss><a xsi:type=\"x\"/></rss>"),
        Malformed::UnboundPrefix("xsi".into())
    );
}

#[test]
fn prefix_undeclaration_is_malformed() {
    assert_eq!(
        kind("<rss xmlns:p=\"\"/>"),
        Malformed::EmptyPrefixBinding("p".into())
    );
}

#[test]
fn same_expanded_attribute_via_two_prefixes_is_malformed() {
    let doc = "<rss xmlns:a=\"urn:x\" xmlns:b=\"urn:x\"><e a:k=\"1\" b:k=\"2\"/></rss>";
    assert_eq!(kind(doc), Malformed::DuplicateAttribute("b:k".into()));
}

#[test]
fn the_same_attribute_or_declaration_twice_is_malformed() {
    let twice = |doc: &str, name: &str| {
        assert_eq!(
            kind(doc),
            Malformed::DuplicateAttribute(name.into()),
            "{doc}"
        );
    };
    twice("<rss><e k=\"1\" k=\"2\"/></rss>", "k");
    twice(
        "<rss xmlns:a=\"urn:x\"><e a:k=\"1\" a:k=\"1\"/></rss>",
        "a:k",
    );
    twice(
        "<rss><e xmlns:p=\"urn:x\" xmlns:p=\"urn:y\"/></rss>",
        "xmlns:p",
    );
    twice("<rss xmlns=\"urn:x\" xmlns=\"urn:x\"/>", "xmlns");
    // The same local name in two namespaces, and a prefix declared again on a child,
    // are fine.
    assert!(
        read_all("<rss xmlns:a=\"urn:x\"><e k=\"1\" a:k=\"2\" xmlns:a=\"urn:y\"/></rss>").is_ok()
    );
}

#[test]
fn second_root_and_text_after_root_are_malformed() {
    assert!(matches!(kind("<rss/><rss/>"), Malformed::AfterRoot(_)));
    assert!(matches!(kind("<rss/>trailing"), Malformed::AfterRoot(_)));
    assert!(read_all("<rss/>\n<!-- fine -->\n").is_ok());
}

#[test]
fn undefined_entity_is_malformed_but_predefined_and_char_refs_are_fine() {
    assert_eq!(
        kind("<rss>a&nbsp;b</rss>"),
        Malformed::UndefinedEntity("nbsp".into())
    );
    assert!(read_all("<rss a=\"&amp;&#38;&#x26;\">&lt;&#229;</rss>").is_ok());
    assert_eq!(kind("<rss>&#1;</rss>"), Malformed::BadCharRef("#1".into()));
}

#[test]
fn entity_declarations_are_refused_without_expansion() {
    let doc = "<!DOCTYPE rss [<!ENTITY a \"aaaa\"><!ENTITY b \"&a;&a;\">]><rss>&b;</rss>";
    let e = read_all(doc).expect_err("entity declarations");
    assert_eq!(e.kind, Malformed::EntityDeclaration);
    assert_eq!(e.pos, Pos { line: 1, column: 1 });
}

#[test]
fn empty_and_truncated_documents_are_malformed() {
    assert_eq!(kind(""), Malformed::Empty);
    assert_eq!(kind("  \n "), Malformed::Empty);
    assert_eq!(
        kind("<rss><channel>"),
        Malformed::Unclosed("channel".into())
    );
}

#[test]
fn mismatched_end_tag_names_both() {
    let doc = "<rss xmlns:dcterms=\"http://purl.org/dc/terms/\"><dcterms:publisher>x</decterms:publisher></rss>";
    assert_eq!(
        kind(doc),
        Malformed::MismatchedEnd {
            expected: "dcterms:publisher".into(),
            found: "decterms:publisher".into()
        }
    );
}

#[test]
fn nesting_is_limited() {
    let doc = format!("{}{}", "<a>".repeat(300), "</a>".repeat(300));
    assert_eq!(kind(&doc), Malformed::TooDeep(256));
}

#[test]
fn positions_of_elements_and_attributes() {
    let doc = "<rss>\n  <ä>\n\t<b x=\"1\"\n     y=\"2\"/></ä></rss>";
    let mut r = XmlReader::new(doc.as_bytes(), ReaderLimits::default());
    let mut seen = Vec::new();
    loop {
        match r.read_event().expect("well-formed") {
            XmlEvent::Start(s) => {
                seen.push((s.local.to_string(), s.pos));
                for a in s.attrs {
                    seen.push((a.local.clone(), a.pos));
                }
            }
            XmlEvent::Eof => break,
            _ => {}
        }
    }
    let p = |line, column| Pos { line, column };
    assert_eq!(
        seen,
        vec![
            ("rss".into(), p(1, 1)),
            ("ä".into(), p(2, 3)),
            ("b".into(), p(3, 2)),
            ("x".into(), p(3, 5)),
            ("y".into(), p(4, 6)),
        ]
    );
}

#[test]
fn xsi_type_is_resolved_against_the_elements_own_declarations() {
    let doc = "<rss xmlns:dc=\"http://purl.org/dc/terms/\"><i xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:type=\"dc:isbn\"/><j xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:type=\"zz:isbn\"/></rss>";
    let mut r = XmlReader::new(doc.as_bytes(), ReaderLimits::default());
    let mut found = Vec::new();
    loop {
        match r.read_event().expect("well-formed") {
            XmlEvent::Start(s) => {
                if let Some(a) = s.attr(NsId::XSI, "type") {
                    found.push(a.qname.clone());
                }
            }
            XmlEvent::Eof => break,
            _ => {}
        }
    }
    assert_eq!(
        found,
        vec![
            Some(QNameValue::Resolved(NsId::DCTERMS, "isbn".into())),
            Some(QNameValue::Unbound("zz".into()))
        ]
    );
}

/// Every event as text (text events with the white space at their start removed), and
/// the error with its position, reading with white space skipped or not.
fn events(doc: &[u8], skip: bool) -> Vec<String> {
    let mut r = XmlReader::new(doc, ReaderLimits::default());
    r.skip_space(skip);
    let mut out = Vec::new();
    loop {
        match r.read_event() {
            Ok(XmlEvent::Start(s)) => out.push(format!("<{}@{}", s.local, s.pos)),
            Ok(XmlEvent::Text(t)) => {
                let t = t.trim_start_matches([' ', '\t', '\n', '\r']);
                if !t.is_empty() {
                    out.push(format!("text {t:?}"));
                }
            }
            Ok(XmlEvent::End) => out.push(format!(">@{}", r.offset())),
            Ok(XmlEvent::Eof | XmlEvent::Boundary) => return out,
            Err(ReadError::Malformed(e)) => {
                out.push(format!("error {:?} at {}", e.kind, e.pos));
                return out;
            }
            Err(ReadError::Io(e)) => panic!("io: {e}"),
        }
    }
}

#[test]
fn skipping_white_space_between_tags_changes_no_position_or_error() {
    let docs: [&[u8]; 8] = [
        b"<rss>\n\t<channel>\n\t\t<item>\n\t\t\t<title>  A &amp; B </title>\n\t\t</item>\n\t</channel>\n</rss>\n",
        b"<rss>\n  <a>\n  x ]]> y</a></rss>",
        b"<rss>\n  \n  ]]></rss>",
        b"<rss>\n   \xff</rss>",
        b"<rss>\n   \x01<a/></rss>",
        b"<rss>\n  <p:a/></rss>",
        b"<rss>\n  &bogus;</rss>",
        b"<rss>\n  <?xml version=\"1.0\"?></rss>",
    ];
    for doc in docs {
        let plain = events(doc, false);
        assert!(plain.len() > 1, "{plain:?}");
        assert_eq!(events(doc, true), plain, "{}", String::from_utf8_lossy(doc));
    }
    // White space filling whole decoder reads (64 KiB) is skipped too.
    let mut long = b"<rss>".to_vec();
    long.extend(std::iter::repeat_n(b' ', 200_000));
    long.extend_from_slice(b"<a>\n</a>\n</rss>");
    assert_eq!(events(&long, true), events(&long, false));
}

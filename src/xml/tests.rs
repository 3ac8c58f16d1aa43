use std::io;

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

/// All text of a document, as the reader gives it.
fn text_of(doc: &str) -> Result<String, XmlError> {
    let mut r = XmlReader::new(doc.as_bytes(), ReaderLimits::default());
    let mut out = String::new();
    loop {
        match r.read_event() {
            Ok(XmlEvent::Text(t)) => out.push_str(t),
            Ok(XmlEvent::Start(s)) => {
                out.push_str(&format!("<{}", s.local));
                for a in s.attrs {
                    out.push_str(&format!(" {}=[{}]", a.local, a.value));
                }
                out.push('>');
            }
            Ok(XmlEvent::End) => out.push_str("</>"),
            Ok(XmlEvent::Eof) => return Ok(out),
            Ok(_) => {}
            Err(ReadError::Malformed(e)) => return Err(e),
            Err(ReadError::Io(e)) => panic!("io: {e}"),
        }
    }
}

#[test]
fn internal_entities_are_expanded_in_content_and_attribute_values() {
    let doc = "<!DOCTYPE rss [<!ENTITY nbsp \"&#160;\"><!ENTITY b \"<b x='&nbsp;'>&nbsp;</b>\"><!ATTLIST rss v CDATA '2.0' t NMTOKENS #IMPLIED>]><rss t='  a   b '>1&nbsp;2&b;</rss>";
    assert_eq!(
        text_of(doc).expect("well-formed"),
        "<rss t=[a b] v=[2.0]>1\u{a0}2<b x=[\u{a0}]>\u{a0}</></>"
    );
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

/// What reading `doc` ends with: "ok", or the error and its position.
fn verdict(doc: &str) -> String {
    match read_all(doc) {
        Ok(_) => "ok".into(),
        Err(e) => format!("{:?} at {}", e.kind, e.pos),
    }
}

#[test]
fn markup_xml_allows_is_read() {
    for doc in [
        "<rss a='1' b = \"2\"\n  c=\"x>y\" d='\"'/>",
        "<rss><!-- a - b --><!----><![CDATA[<&>]]]]><?pi x?><?pi?></rss>",
        "<!DOCTYPE rss [<!ELEMENT rss ANY><!ATTLIST rss a CDATA \"x>]y\">]>\n<rss/>",
        "<?xml version=\"1.0\"?>\n<!-- c --><rss/>\n<?pi after?>",
        "<rss>]] ] a]]&gt;b</rss >",
        "<r:a xmlns:r=\"urn:x\" r:b.c-d_e=\"1\"><ä>ö</ä ></r:a>",
        "<_a\t\r\nb='1'\n/>",
    ] {
        assert_eq!(verdict(doc), "ok", "{doc}");
    }
}

#[test]
fn start_tags_xml_forbids_are_malformed_where_they_start() {
    let syntax = |what: &str| format!("Syntax({what:?})");
    for (doc, want) in [
        (
            "<rss a=\"1\"b=\"2\"/>",
            format!(
                "{} at 1:11",
                syntax(
                    "no white space between an attribute's value and what follows; separate attributes with a space"
                )
            ),
        ),
        (
            "<rss a/>",
            format!(
                "{} at 1:6",
                syntax("attribute `a` has no value; write a=\"…\"")
            ),
        ),
        (
            "<rss a >",
            format!(
                "{} at 1:6",
                syntax("attribute `a` has no value; write a=\"…\"")
            ),
        ),
        (
            "<rss a=1/>",
            format!(
                "{} at 1:6",
                syntax("the value of attribute `a` must be in quotes: a=\"…\"")
            ),
        ),
        (
            "<rss a=\"1/>",
            format!(
                "{} at 1:1",
                syntax(
                    "an attribute value in this start tag opens with `\"` and is never closed; add the closing `\"`"
                )
            ),
        ),
        ("<rss 1a=\"x\"/>", "BadName(\"1a\") at 1:6".into()),
        ("<1rss/>", "BadName(\"1rss\") at 1:1".into()),
        (
            "<rss>\n if a < b</rss>",
            format!(
                "{} at 2:7",
                syntax("a `<` that starts no tag; write `&lt;` for a `<` in text")
            ),
        ),
        ("<r<s/>", "BadName(\"r<s/\") at 1:1".into()),
        (
            "<rss/ >",
            format!(
                "{} at 1:5",
                syntax("`/` in a start tag must be followed by `>`")
            ),
        ),
        (
            "<rss a='1' =/>",
            format!(
                "{} at 1:12",
                syntax("`=` where an attribute name, `>` or `/>` should come")
            ),
        ),
    ] {
        assert_eq!(verdict(doc), want, "{doc}");
    }
}

// Over 100 lines: a table of cases.
#[test]
fn other_markup_xml_forbids_is_malformed_where_it_starts() {
    let syntax = |what: &str| format!("Syntax({what:?})");
    for (doc, want) in [
        (
            "<rss><!-- a -- b --></rss>",
            format!(
                "{} at 1:6",
                syntax("`--` inside a comment, which XML forbids; write `- -` or remove it")
            ),
        ),
        (
            "<rss><!-- a ---></rss>",
            format!(
                "{} at 1:6",
                syntax("`--` inside a comment, which XML forbids; write `- -` or remove it")
            ),
        ),
        ("<rss><![CDATA[x</rss>", "Unclosed(\"rss\") at 1:6".into()),
        (
            "<!-- x",
            format!(
                "{} at 1:1",
                syntax(
                    "the input ends inside a comment; the feed is truncated or a comment is never closed"
                )
            ),
        ),
        (
            "<? x?><rss/>",
            format!(
                "{} at 1:1",
                syntax(
                    "`<?` does not start a processing instruction: `<?` must be followed by a name, as in `<?xml-stylesheet …?>`"
                )
            ),
        ),
        (
            "<!DOCTYPE><rss/>",
            format!(
                "{} at 1:1",
                syntax(
                    "`<!DOCTYPE` must be followed by a space and the root element's name, as in `<!DOCTYPE rss>`"
                )
            ),
        ),
        (
            "<!doctype rss><rss/>",
            format!(
                "{} at 1:1",
                syntax(
                    "`<!doctype` starts no markup XML knows: `<!` begins a comment `<!--…-->`, a CDATA section `<![CDATA[…]]>` or a DOCTYPE"
                )
            ),
        ),
        (
            "<rss>\n  <!x></rss>",
            format!(
                "{} at 2:3",
                syntax(
                    "`<!x></rss` starts no markup XML knows: `<!` begins a comment `<!--…-->`, a CDATA section `<![CDATA[…]]>` or a DOCTYPE"
                )
            ),
        ),
        (
            "<!x",
            format!(
                "{} at 1:1",
                syntax(
                    "the input ends inside markup `<!…`; the feed is truncated or markup `<!…` is never closed"
                )
            ),
        ),
        (
            "<rss>a &amp b</rss>",
            format!(
                "{} at 1:8",
                syntax(
                    "a bare `&` that starts no reference; write `&amp;` (in URLs too: `?id=1&amp;sektion=2`) or wrap the text in CDATA"
                )
            ),
        ),
        (
            "<rss>\n x ]]> y</rss>",
            "BadCharacterData(\"`]]>`\") at 1:6".into(),
        ),
        (
            "<rss></rss><?XML x?>",
            format!(
                "{} at 1:12",
                syntax(
                    "the XML declaration `<?xml …?>` must come first, before anything else, even whitespace"
                )
            ),
        ),
        (
            "<rss><a></b></rss>",
            "MismatchedEnd { expected: \"a\", found: \"b\" } at 1:9".into(),
        ),
    ] {
        assert_eq!(verdict(doc), want, "{doc}");
    }
}

/// The documents of issue 15 "as a publisher's CMS might produce them", which the scanner
/// used to pass: not well-formed, each at the place expat points to or nearer.
#[test]
fn the_hand_made_documents_of_issue_15_are_not_well_formed() {
    for (doc, at) in [
        ("<?xml VERSION=\"1.0\"?>\n<rss/>", "1:7"),
        (
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"maybe\"?>\n<rss/>",
            "1:38",
        ),
        ("<!DOCTYPE rss [ <![INCLUDE[ ]]> ]>\n<rss/>", "1:17"),
        (
            "<!DOCTYPE rss [ <!ELEMENT rss (a, (b) | c)?> ]>\n<rss/>",
            "1:39",
        ),
        ("<!DOCTYPE rss -- a comment -- []>\n<rss/>", "1:15"),
    ] {
        let e = read_all(doc).expect_err(doc);
        assert!(e.kind.is_not_well_formed(), "{doc}: {:?}", e.kind);
        assert_eq!(e.pos.to_string(), at, "{doc}: {}", e.kind);
    }
    let nbsp = "<!DOCTYPE rss [\n  <!ENTITY nbsp \"&#160;\">\n]>\n<rss>a&nbsp;b</rss>";
    assert_eq!(text_of(nbsp).expect("well-formed"), "<rss>a\u{a0}b</>");
}

/// What reading `doc` ends with, as [`verdict`] says, with whether XML calls it not
/// well-formed.
fn wf_verdict(doc: &str) -> String {
    match read_all(doc) {
        Ok(_) => "ok".into(),
        Err(e) if e.kind.is_not_well_formed() => format!("not-wf at {}: {}", e.pos, e.kind),
        Err(e) => format!("refused at {}: {}", e.pos, e.kind),
    }
}

#[test]
fn entity_references_keep_the_well_formedness_constraints() {
    let dtd = |decls: &str, body: &str| format!("<!DOCTYPE r [{decls}]>\n<r>{body}</r>");
    for (doc, want) in [
        // WFC: No Recursion, directly and through another entity.
        (dtd("<!ENTITY a '&a;'>", "&a;"), "not-wf at 2:4"),
        (
            dtd("<!ENTITY a '&b;'><!ENTITY b '<x>&a;</x>'>", "&a;"),
            "not-wf at 2:4",
        ),
        // WFC: Parsed Entity: replacement text matches `content`.
        (dtd("<!ENTITY a '<x>'>", "&a;"), "not-wf at 2:4"),
        (dtd("<!ENTITY a '</r>'>", "&a;"), "not-wf at 2:4"),
        (dtd("<!ENTITY a 'x]]>y'>", "&a;"), "not-wf at 2:4"),
        (dtd("<!ENTITY a '&#60;x/>'>", "&a;"), "ok"),
        (dtd("<!ENTITY a '&#38;#60;'>", "&a;"), "ok"),
        // WFC: No < in Attribute Values, No External Entity References.
        (dtd("<!ENTITY a '&#60;'>", "<x y='&a;'/>"), "not-wf at 2:7"),
        (
            dtd("<!ENTITY a SYSTEM 'a.xml'>", "<x y='&a;'/>"),
            "not-wf at 2:7",
        ),
        // Unparsed entities are never referenced.
        (
            dtd(
                "<!NOTATION n SYSTEM 'n'><!ENTITY a SYSTEM 'a' NDATA n>",
                "&a;",
            ),
            "not-wf at 2:4",
        ),
        // External entities are never fetched: a finding, but no well-formedness error.
        (dtd("<!ENTITY a SYSTEM 'a.xml'>", "&a;"), "refused at 2:4"),
        // WFC: Entity Declared holds without an external subset or parameter entities…
        (dtd("", "&nbsp;"), "not-wf at 2:4"),
        // …and with them only in a standalone document.
        (
            "<!DOCTYPE r SYSTEM 'r.dtd'>\n<r>&nbsp;</r>".into(),
            "refused at 2:4",
        ),
        (
            "<?xml version='1.0' standalone='yes'?><!DOCTYPE r SYSTEM 'r.dtd'>\n<r>&nbsp;</r>"
                .into(),
            "not-wf at 2:4",
        ),
        // An internal parameter entity is included; after an external one, declarations
        // are not used (XML §5.1).
        (dtd("<!ENTITY % p '<!ENTITY a \"x\">'>%p;", "&a;"), "ok"),
        (
            dtd("<!ENTITY % p SYSTEM 'p.dtd'>%p;<!ENTITY a 'x'>", "&a;"),
            "refused at 2:4",
        ),
        (
            dtd("<!ENTITY % p '<!ENTITY a \"x\"'>%p;>", ""),
            "not-wf at 1:44",
        ),
        (dtd("<!ENTITY a '%p;'>", ""), "not-wf at 1:26"),
        // The first declaration binds.
        (dtd("<!ENTITY a 'x'><!ENTITY a '<'>", "&a;"), "ok"),
    ] {
        let got = wf_verdict(&doc);
        assert!(got.starts_with(want), "{doc}: {got}");
    }
}

#[test]
fn entity_expansion_is_bounded() {
    let mut doc = String::from("<!DOCTYPE r [<!ENTITY a0 'aaaaaaaaaa'>");
    for i in 1..10 {
        let p = i - 1;
        doc.push_str(&format!(
            "<!ENTITY a{i} '{}'>",
            format!("&a{p};").repeat(10)
        ));
    }
    doc.push_str("]><r>&a9;</r>");
    let e = read_all(&doc).expect_err("billion laughs");
    assert_eq!(e.kind, Malformed::Amplification { factor: 100 });
    assert!(!e.kind.is_not_well_formed());
    // Nesting deeper than the limit.
    let mut deep = String::from("<!DOCTYPE r [<!ENTITY e0 'x'>");
    for i in 1..=50 {
        deep.push_str(&format!("<!ENTITY e{i} '&e{};'>", i - 1));
    }
    deep.push_str("]><r>&e50;</r>");
    assert_eq!(
        read_all(&deep).expect_err("deep").kind,
        Malformed::EntitiesTooDeep(40)
    );
    // Well within the bounds, the text is all there.
    let few = "<!DOCTYPE r [<!ENTITY a 'ab'><!ENTITY b '&a;&a;'>]><r>&b;&b;</r>";
    assert_eq!(text_of(few).expect("well-formed"), "<r>abababab</>");
}

#[test]
fn names_are_exactly_the_fifth_editions() {
    assert_eq!(verdict("<r><é/><日本/><a\u{B7}/></r>"), "ok");
    assert!(verdict("<r><a×b/></r>").starts_with("BadName(\"a×b\") at 1:4"));
    assert!(verdict("<r a×b='1'/>").starts_with("BadName(\"a×b\") at 1:4"));
    assert!(verdict("<r><\u{300}a/></r>").starts_with("BadName"));
    assert!(verdict("<r><p:1a xmlns:p='urn:x'/></r>").starts_with("BadName"));
    assert!(verdict("<r>&#x41;&#65;</r>") == "ok");
    assert!(verdict("<r>&#+65;</r>").starts_with("Syntax(\"a bare `&`"));
    for bad in [
        "&#X41;",
        "&#x;",
        "&#;",
        "&#0;",
        "&#xD800;",
        "&#99999999999;",
    ] {
        assert!(
            verdict(&format!("<r>{bad}</r>")).starts_with("BadCharRef"),
            "{bad}"
        );
    }
}

/// Gives at most `n` bytes per read, as a pipe might.
struct Trickle<'a>(&'a [u8], usize);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.len().min(buf.len()).min(self.1);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// Every event and the error of reading `input`.
fn events_of(input: impl Read) -> Vec<String> {
    let mut r = XmlReader::new(input, ReaderLimits::default());
    let mut out = Vec::new();
    loop {
        match r.read_event() {
            Ok(XmlEvent::Eof) => return out,
            Ok(XmlEvent::Start(s)) => out.push(format!("<{} {} {:?}", s.local, s.pos, s.attrs)),
            Ok(e) => out.push(format!("{e:?}")),
            Err(ReadError::Malformed(e)) => {
                out.push(format!("{e:?}"));
                return out;
            }
            Err(ReadError::Io(e)) => panic!("io: {e}"),
        }
    }
}

/// Found by the `xml` fuzz target: the message of a bad name held as much of it as the
/// decoder's window had, so it changed with the size of the reads.
#[test]
fn verdicts_do_not_depend_on_how_the_bytes_arrive() {
    for doc in [
        "<r><Leg<!ELEMENT a></r>",
        "<r a='1' b<c='2'/>",
        "<!DOCTYPE r [<!-- ]> ' --><!ENTITY e '<x a=\"&#62;\"/>'><?p ]>?>]><r>&e;</r>",
        "<?xml version='1.0' standalone='yes'?><!DOCTYPE r [<!ATTLIST r a CDATA 'x'>]><r/>",
        "<!DOCTYPE r [<!ENTITY a '&#60;b>'>]><r>&a;</r>",
    ] {
        let whole = events_of(doc.as_bytes());
        for step in 1..=16 {
            assert_eq!(
                events_of(Trickle(doc.as_bytes(), step)),
                whole,
                "{doc}, reads of {step}"
            );
        }
    }
}

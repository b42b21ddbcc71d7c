use super::*;
use serde_json::{Value, json};

fn round_trip(v: &Value) {
    let text = to_string(v).unwrap();
    let back: Value =
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("unreadable YAML: {e}\n{text}"));
    assert_eq!(&back, v, "\n{text}");
}

#[test]
fn layout_is_kubectls() {
    let v = json!({
        "apiVersion": "v1",
        "spec": {"items": [{"name": "a", "args": ["x", "y"]}, "b", [1, 2]], "empty": {}, "none": []},
        "n": 3,
    });
    assert_eq!(
        to_string(&v).unwrap(),
        "apiVersion: v1\n'n': 3\nspec:\n  empty: {}\n  items:\n  - args:\n    - x\n    - 'y'\n    name: a\n  - b\n  - - 1\n    - 2\n  none: []\n"
    );
    round_trip(&v);
}

#[test]
fn strings_read_back_as_strings() {
    for s in [
        "",
        " lead",
        "trail ",
        "yes",
        "No",
        "on",
        "y",
        "null",
        "~",
        "true",
        "1",
        "007",
        "1.5",
        "-1",
        ".inf",
        "0x1F",
        "1e3",
        "a: b",
        "a:b",
        "a #b",
        "a#b",
        "#c",
        "{{tasks.a.outputs.result}}",
        "it's",
        "tab\there",
        "bell\u{7}",
        "- x",
        "? x",
        "@x",
        "`x`",
        "%x",
        "!x",
        "&x",
        "*x",
        "a,b",
        "[x]",
        "x]",
        "über",
        "名字",
        "\u{feff}bom",
        "ends:",
        "$(params.x)",
        "line\n",
        "two\nlines",
        "  indented\nnext",
        "\nleading",
        "keep\n\n\n",
        "cr\r\nlf",
        "trailing \nspace",
        "x\u{2028}y",
        "=",
        "<<",
        "a\u{2029}\nb",
        "\"quoted\"",
        "back\\slash",
        "'single'",
    ] {
        round_trip(&json!({ "k": s, "list": [s], s: 1 }));
    }
}

#[test]
fn numbers_keep_their_type() {
    round_trip(
        &json!({"i": -7, "u": 18446744073709551615u64, "f": 0.1, "g": 2.0, "b": false, "z": null}),
    );
}

#[test]
fn scripts_become_literal_blocks() {
    let v = json!({"script": "#!/bin/sh\necho hi\n", "none": "a\nb"});
    let text = to_string(&v).unwrap();
    assert!(
        text.contains("script: |\n  #!/bin/sh\n  echo hi\n"),
        "{text}"
    );
    assert!(text.contains("none: |-\n  a\n  b\n"), "{text}");
    round_trip(&v);
}

#[test]
fn enums_and_options() {
    #[derive(serde::Serialize)]
    enum E {
        Unit,
        New(u8),
        Tuple(u8, u8),
        Struct { a: u8 },
    }
    #[derive(serde::Serialize)]
    struct S {
        e: Vec<E>,
        o: Option<u8>,
    }
    let text = to_string(&S {
        e: vec![E::Unit, E::New(1), E::Tuple(1, 2), E::Struct { a: 3 }],
        o: None,
    })
    .unwrap();
    let back: Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(
        back,
        json!({"e": ["Unit", {"New": 1}, {"Tuple": [1, 2]}, {"Struct": {"a": 3}}], "o": null}),
        "{text}"
    );
}

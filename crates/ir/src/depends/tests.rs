use super::*;

fn r(n: &str, o: Option<Outcome>) -> Expr {
    Expr::Ref(n.to_owned(), o)
}

#[test]
fn parses_bare_names_and_outcomes() {
    assert_eq!(parse("a").unwrap(), r("a", None));
    assert_eq!(parse("  train-1 ").unwrap(), r("train-1", None));
    assert_eq!(parse("c.failed").unwrap(), r("c", Some(Outcome::Failed)));
    for o in Outcome::ALL {
        assert_eq!(
            parse(&format!("x.{}", o.as_str())).unwrap(),
            r("x", Some(o))
        );
    }
}

#[test]
fn and_binds_tighter_than_or() {
    let e = parse("a || b && c").unwrap();
    assert_eq!(
        e,
        Expr::Or(vec![
            r("a", None),
            Expr::And(vec![r("b", None), r("c", None)])
        ])
    );
    let e = parse("a&&(c.succeeded||c.failed)").unwrap();
    assert_eq!(
        e,
        Expr::And(vec![
            r("a", None),
            Expr::Or(vec![
                r("c", Some(Outcome::Succeeded)),
                r("c", Some(Outcome::Failed))
            ])
        ])
    );
    assert_eq!(
        parse("!!a.skipped").unwrap(),
        Expr::Not(Box::new(Expr::Not(Box::new(r(
            "a",
            Some(Outcome::Skipped)
        )))))
    );
}

#[test]
fn displays_canonically_and_round_trips() {
    for (text, canonical) in [
        (
            "a&&(c.succeeded||c.failed)",
            "a && (c.succeeded || c.failed)",
        ),
        ("(a || b) || c", "a || b || c"),
        ("!(a && b)", "!(a && b)"),
        ("!a.any || b", "!a.any || b"),
        ("a || (b && c)", "a || b && c"),
        ("(a && b) && c", "a && b && c"),
    ] {
        let e = parse(text).unwrap();
        let shown = e.to_string();
        assert_eq!(shown, canonical, "{text}");
        let again = parse(&shown).unwrap();
        assert_eq!(again.to_string(), shown, "{text}");
    }
}

#[test]
fn syntax_errors_say_where() {
    let cases = [
        ("", 0, "empty entry"),
        ("a &&", 4, "found the end"),
        ("a & b", 2, "unexpected '&'"),
        ("(a || b", 7, "`(` at position 0 is not closed"),
        ("a)", 1, "unmatched `)`"),
        ("a.Failed", 2, "\"Failed\" is not an outcome"),
        ("a.", 2, "\"\" is not an outcome"),
        ("a b", 2, "unexpected 'b'"),
        ("|| a", 0, "expected a step name, found '|'"),
    ];
    for (text, position, message) in cases {
        let e = parse(text).unwrap_err();
        assert_eq!(e.position, position, "{text}: {e}");
        assert!(e.message.contains(message), "{text}: {e}");
    }
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    let text = format!("{}a{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(parse(&text).unwrap_err().message.contains("nested"));
    let nots = format!("{}a", "!".repeat(10_000));
    assert!(parse(&nots).is_err());
}

#[test]
fn judges_with_three_values() {
    let e = parse("a && (c.succeeded || c.failed)").unwrap();
    let known = |pairs: &'static [(&'static str, Ended)]| {
        move |n: &String| pairs.iter().find(|(k, _)| k == n).map(|(_, v)| *v)
    };
    assert_eq!(e.judge(&known(&[])), None);
    assert_eq!(e.judge(&known(&[("a", Ended::Skipped)])), Some(false));
    assert_eq!(e.judge(&known(&[("a", Ended::Succeeded)])), None);
    assert_eq!(
        e.judge(&known(&[("a", Ended::Succeeded), ("c", Ended::Failed)])),
        Some(true)
    );
    assert_eq!(
        e.judge(&known(&[("a", Ended::Succeeded), ("c", Ended::Skipped)])),
        Some(false)
    );
    let any = parse("b || c").unwrap();
    assert_eq!(any.judge(&known(&[("b", Ended::Succeeded)])), Some(true));
    assert_eq!(any.judge(&known(&[("b", Ended::Failed)])), None);
    let not = parse("!x.any").unwrap();
    assert_eq!(not.judge(&known(&[("x", Ended::Skipped)])), Some(false));
}

#[test]
fn names_expand_and_flatten() {
    let e = parse("g && x.failed").unwrap();
    assert_eq!(e.names(), vec!["g", "x"]);
    let expanded = e.expand(&mut |n, o| {
        if n == "g" {
            Expr::all(vec![Expr::Ref(1u32, o), Expr::Ref(2, o)])
        } else {
            Expr::Ref(3, o)
        }
    });
    assert_eq!(
        expanded,
        Expr::And(vec![
            Expr::Ref(1, None),
            Expr::Ref(2, None),
            Expr::Ref(3, Some(Outcome::Failed))
        ])
    );
    assert!(
        parse("a && b.succeeded")
            .unwrap()
            .is_conjunction_of_successes()
    );
    assert!(!parse("a || b").unwrap().is_conjunction_of_successes());
    assert!(!parse("a.any").unwrap().is_conjunction_of_successes());
}

#[test]
fn folds_known_outcomes_in() {
    let e = parse("a && (c.succeeded || c.failed) || !d.skipped").unwrap();
    let known = |n: &String| (n == "c").then_some(Ended::Failed);
    assert_eq!(e.fold(&known).unwrap().to_string(), "a || !d.skipped");
    let known = |n: &String| (n == "d").then_some(Ended::Succeeded);
    assert_eq!(e.fold(&known), Err(true));
    let known = |n: &String| match n.as_str() {
        "a" => Some(Ended::Skipped),
        "d" => Some(Ended::Skipped),
        _ => None,
    };
    assert_eq!(e.fold(&known), Err(false));
    assert_eq!(e.fold(&|_| None), Ok(e.clone()));
}

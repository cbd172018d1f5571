//! Results.

use super::*;

#[test]
fn results_are_generic_and_details_go_to_events() {
    let mut page = Page::new();
    page.register(tool("t"));
    for (id, outcome) in [
        (
            "threw",
            Outcome::Threw("TypeError: x is undefined at secret.js:1".into()),
        ),
        (
            "cyclic",
            Outcome::NotSerializable("Converting circular structure".into()),
        ),
        ("undefined", Outcome::Ok(None)),
        (
            "date",
            Outcome::Ok(Some("\"2026-11-30T10:00:00.000Z\"".into())),
        ),
    ] {
        page.call(id, "t", json!({}));
        let run = only_run(&mut page);
        page.settle(run, outcome);
    }
    assert_eq!(
        page.result("threw"),
        json!({"status": "error", "message": "Tool failed"})
    );
    assert_eq!(
        page.result("cyclic"),
        json!({"status": "error", "message": "Result not serializable"})
    );
    assert_eq!(page.result("undefined"), json!({"status": "ok"}));
    assert_eq!(
        page.result("date"),
        json!({"status": "ok", "data": "2026-11-30T10:00:00.000Z"})
    );
    assert_eq!(
        page.error_codes(),
        [ErrorEventCode::ToolThrew, ErrorEventCode::TransportFailed]
    );
    let detail = page.events.iter().find_map(|e| match e {
        Event::Error { message, tool, .. } => Some((message.clone(), tool.clone())),
        _ => None,
    });
    assert_eq!(
        detail,
        Some((
            "TypeError: x is undefined at secret.js:1".into(),
            Some("t".into())
        ))
    );
}

#[test]
fn input_is_validated_against_the_schema_with_dotted_paths() {
    let mut page = Page::new();
    let mut def = tool("order");
    def.input_schema = Some(SchemaSpec::Json(json!({
        "type": "object", "required": ["email", "items"],
        "properties": {
            "email": {"type": "string", "pattern": "^[^@]+@[^@]+$"},
            "items": {"type": "array", "items": {"type": "object", "required": ["name"],
                       "properties": {"name": {"type": "string"}}}}
        }
    })));
    page.register(def);
    page.call(
        "bad",
        "order",
        json!({"email": "nope", "items": [{"name": 3}]}),
    );
    assert!(
        page.take_runs().is_empty(),
        "invalid input never reaches the tool"
    );
    assert_eq!(
        page.result("bad"),
        json!({"status": "invalid", "issues": [
            {"path": "email", "message": "must match pattern \"^[^@]+@[^@]+$\""},
            {"path": "items.0.name", "message": "must be string"}
        ]})
    );
    page.call(
        "good",
        "order",
        json!({"email": "a@b", "items": [{"name": "x"}]}),
    );
    assert_eq!(page.take_runs().len(), 1);
}

#[test]
fn an_invalid_result_reports_at_most_100_issues_and_counts_the_rest() {
    use toolmark_bridge::protocol::{validate, Direction};
    let mut page = Page::new();
    let mut def = tool("list");
    def.input_schema = Some(SchemaSpec::Json(
        json!({"type": "array", "items": {"type": "string"}}),
    ));
    page.register(def);
    let mut external = tool("ext");
    external.input_schema = Some(SchemaSpec::External { json: None });
    page.register(external);
    // 5000 wrong items: 5000 issues found.
    page.call("many", "list", Value::Array(vec![json!(1); 5000]));
    let issues = page.result("many")["issues"].clone();
    let issues = issues.as_array().cloned().unwrap_or_default();
    assert_eq!(issues.len(), 100, "at most 100 issues in the result");
    assert_eq!(issues[0], json!({"path": "0", "message": "must be string"}));
    assert_eq!(
        issues[98],
        json!({"path": "98", "message": "must be string"})
    );
    assert_eq!(
        issues[99],
        json!({"path": "", "message": "4901 more issues not shown"})
    );
    // Exactly 100 found: all shown.
    page.call("hundred", "list", Value::Array(vec![json!(1); 100]));
    let hundred = page.result("hundred")["issues"].clone();
    assert_eq!(hundred.as_array().map(Vec::len), Some(100));
    assert_eq!(hundred[99]["path"], "99");
    // A Standard Schema's issues (from JS) are capped the same way.
    page.call("js", "ext", json!({}));
    let Some(Action::Validate { run, .. }) = page.actions.pop() else {
        panic!("validate expected: {:?}", page.actions)
    };
    let many: Vec<Issue> = (0..349_000)
        .map(|i| Issue {
            path: i.to_string(),
            message: "Expected string".into(),
        })
        .collect();
    page.tm
        .handle_validated(run, Validated::Invalid(many), page.now);
    page.drain();
    let js = page.result("js")["issues"].clone();
    assert_eq!(js.as_array().map(Vec::len), Some(100));
    assert_eq!(
        js[99],
        json!({"path": "", "message": "348901 more issues not shown"})
    );
    for message in &page.sent {
        assert!(validate(message, Direction::ToAgent).is_ok(), "{message}");
    }
}

#[test]
fn standard_schema_inputs_are_validated_by_js_and_may_be_transformed() {
    let mut page = Page::new();
    let mut def = tool("t");
    def.input_schema = Some(SchemaSpec::External {
        json: Some(json!({"type": "object"})),
    });
    page.register(def);
    page.call("a", "t", json!({"n": "5"}));
    let run = match page.actions.pop() {
        Some(Action::Validate { run, input, .. }) => {
            assert_eq!(input, r#"{"n":"5"}"#);
            run
        }
        other => panic!("expected Validate, got {other:?}"),
    };
    page.tm
        .handle_validated(run, Validated::Valid(Some(r#"{"n":5}"#.into())), page.now);
    page.drain();
    let runs = page.take_runs();
    assert_eq!(runs[0].2, json!({"n": 5}));
    page.ok(runs[0].0, json!(null));
    page.call("b", "t", json!({}));
    let Some(Action::Validate { run, .. }) = page.actions.pop() else {
        panic!("validate")
    };
    page.tm.handle_validated(
        run,
        Validated::Invalid(vec![Issue {
            path: "n".into(),
            message: "Required".into(),
        }]),
        page.now,
    );
    page.drain();
    assert_eq!(
        page.result("b"),
        json!({"status": "invalid", "issues": [{"path": "n", "message": "Required"}]})
    );
}

#[test]
fn a_validated_value_json_cannot_write_fails_the_call_with_its_reason() {
    let mut page = Page::new();
    let mut ext = tool("ext");
    ext.input_schema = Some(SchemaSpec::External {
        json: Some(json!({"type": "object"})),
    });
    page.register(ext);
    page.call("v", "ext", json!({"n": "5"}));
    let Some(Action::Validate { run, .. }) = page.actions.pop() else {
        panic!("validate expected: {:?}", page.actions)
    };
    page.tm.handle_validated(
        run,
        Validated::NotJson(String::from("bigint at \"n\"")),
        page.now,
    );
    page.drain();
    assert_eq!(
        page.result("v"),
        json!({"status": "error", "message": "Tool failed"})
    );
    assert_eq!(
        page.errors(),
        [(
            ErrorEventCode::ToolThrew,
            String::from("validated input is not JSON-safe: bigint at \"n\"")
        )]
    );
    assert!(page.take_runs().is_empty(), "nothing ran");
}

#[test]
fn a_validator_or_summary_that_throws_answers_tool_failed_and_reports_tool_threw() {
    let mut page = Page::new();
    let mut ext = tool("ext");
    ext.input_schema = Some(SchemaSpec::External {
        json: Some(json!({"type": "object"})),
    });
    page.register(ext);
    let mut pay = consequential("pay");
    pay.has_summary = true;
    page.register(pay);
    page.call("v", "ext", json!({}));
    let Some(Action::Validate { run, .. }) = page.actions.pop() else {
        panic!("validate expected: {:?}", page.actions)
    };
    page.tm
        .handle_validated(run, Validated::Threw("boom in validate".into()), page.now);
    page.drain();
    page.call("s", "pay", json!({}));
    let run = take_prepare(&mut page).run;
    page.tm.handle_prepared(
        run,
        Err(Unprepared::Threw("boom in summary".into())),
        page.now,
    );
    page.drain();
    for id in ["v", "s"] {
        assert_eq!(
            page.result(id),
            json!({"status": "error", "message": "Tool failed"})
        );
    }
    assert_eq!(
        page.error_codes(),
        [ErrorEventCode::ToolThrew, ErrorEventCode::ToolThrew]
    );
    assert!(page.take_runs().is_empty(), "nothing ran");
}

/// A summary or changes JSON cannot carry (NaN, a BigInt) is part of a
/// `needs_confirmation` result that cannot be sent: `Result not
/// serializable`, with `transport_failed`, as a run's result. Nothing is
/// pending, nothing runs.
#[test]
fn a_summary_json_cannot_carry_answers_result_not_serializable() {
    let mut page = Page::new();
    let mut pay = consequential("pay");
    pay.has_summary = true;
    page.register(pay);
    page.call("s", "pay", json!({}));
    let run = take_prepare(&mut page).run;
    page.tm.handle_prepared(
        run,
        Err(Unprepared::NotSerializable("NaN at \"after\"".into())),
        page.now,
    );
    page.drain();
    assert_eq!(
        page.result("s"),
        json!({"status": "error", "message": "Result not serializable"})
    );
    assert_eq!(page.error_codes(), [ErrorEventCode::TransportFailed]);
    assert!(page.tm.pending_confirmations().is_empty());
    assert!(page.take_runs().is_empty(), "nothing ran");
}

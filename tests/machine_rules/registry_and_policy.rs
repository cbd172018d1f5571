//! Registry and policy.

use super::*;

#[test]
fn registry_names_scopes_and_duplicates() {
    let mut page = Page::new();
    let tm = &mut page.tm;
    let now = 0;
    assert!(tm
        .register(ScopeId::ROOT, tool("bad name"), now)
        .ok()
        .flatten()
        .is_none());
    assert!(tm
        .register(ScopeId::ROOT, tool(&"x".repeat(129)), now)
        .ok()
        .flatten()
        .is_none());
    assert!(tm
        .register(ScopeId::ROOT, tool("a.b"), now)
        .ok()
        .flatten()
        .is_some());
    assert!(tm
        .register(ScopeId::ROOT, tool("a.b"), now)
        .ok()
        .flatten()
        .is_none());
    assert!(
        tm.register(ScopeId::ROOT, tool("a__b"), now)
            .ok()
            .flatten()
            .is_none(),
        "same llmName"
    );
    let scope = tm
        .create_scope(ScopeId::ROOT, "signup")
        .ok()
        .and_then(ScopeMade::live)
        .unwrap_or(ScopeId::ROOT);
    let inner = tm
        .create_scope(scope, "address")
        .ok()
        .and_then(ScopeMade::live)
        .unwrap_or(ScopeId::ROOT);
    assert!(tm
        .register(inner, tool("fill"), now)
        .ok()
        .flatten()
        .is_some());
    assert!(tm
        .register(ScopeId(999), tool("x"), now)
        .ok()
        .flatten()
        .is_none());
    assert_eq!(tm.rev(), 2);
    tm.dispose_scope(scope, now).ok();
    assert_eq!(tm.rev(), 3, "one revision for the whole scope");
    assert!(tm
        .register(inner, tool("again"), now)
        .ok()
        .flatten()
        .is_none());
    page.drain();
    assert_eq!(
        page.error_codes(),
        [
            ErrorEventCode::InvalidName,
            ErrorEventCode::InvalidName,
            ErrorEventCode::DuplicateName,
            ErrorEventCode::DuplicateName,
            ErrorEventCode::InvalidScope,
            ErrorEventCode::ScopeDisposed
        ]
    );
    assert_eq!(inapp_names(&page), ["a.b"]);
}

/// A tool's name is its full name, joined with its scopes' prefixes: the
/// 128-character limit and the duplicate check apply to that.
#[test]
fn scoped_names_are_checked_and_compared_joined_with_their_scopes() {
    let mut page = Page::new();
    let outer = page.scope(&"s".repeat(10));
    let inner = page
        .tm
        .create_scope(outer, &"t".repeat(10))
        .ok()
        .and_then(ScopeMade::live)
        .unwrap_or(ScopeId::ROOT);
    // "ssssssssss.tttttttttt." is 22 characters.
    assert!(page
        .tm
        .register(inner, tool(&"n".repeat(107)), page.now)
        .ok()
        .flatten()
        .is_none());
    page.register(tool("a.b"));
    let a = page.scope("a");
    assert!(page
        .tm
        .register(a, tool("b"), page.now)
        .ok()
        .flatten()
        .is_none());
    page.drain();
    let long = format!(
        "{}.{}.{}",
        "s".repeat(10),
        "t".repeat(10),
        "n".repeat(129 - 22)
    );
    assert_eq!(
        page.errors(),
        [
            (
                ErrorEventCode::InvalidName,
                format!("tool name '{long}' does not match ^[A-Za-z0-9_.-]{{1,128}}$")
            ),
            (
                ErrorEventCode::DuplicateName,
                "a tool named 'a.b' is already registered".to_owned()
            )
        ]
    );
    assert_eq!(page.tm.rev(), 1, "only a.b was registered");
    page.register_in(inner, tool(&"n".repeat(106)));
    assert_eq!(inapp_names(&page), ["a.b", &long[..128]]);
}

/// A scope refused outside dev mode is an error event and a scope the page
/// still holds: it keeps the name it was asked for (joined to its
/// parent's), and registering in it is refused as `invalid_scope`, naming
/// it. In dev mode the creation itself is the error.
#[test]
fn a_refused_scope_keeps_its_name_and_refuses_registrations() {
    let mut page = Page::new();
    let signup = page.scope("signup");
    let made = page.tm.create_scope(signup, "no spaces");
    let Ok(ScopeMade::Refused(refused)) = made else {
        panic!("not refused: {made:?}");
    };
    assert_eq!(page.tm.scope_prefix(refused), Some("signup.no spaces"));
    let nested = page.tm.create_scope(refused, "x").ok().map(ScopeMade::id);
    let nested = nested.unwrap_or(ScopeId::ROOT);
    assert_eq!(page.tm.scope_prefix(nested), Some("signup.no spaces.x"));
    let registered = page.tm.register(refused, tool("fill"), page.now);
    assert_eq!(registered.ok().flatten(), None);
    page.drain();
    let refusal = "scope 'signup.no spaces' was refused when it was created".to_owned();
    assert_eq!(
        page.errors(),
        [
            (
                ErrorEventCode::InvalidName,
                "scope name 'no spaces' does not make a valid tool name prefix ('signup.no spaces')"
                    .to_owned()
            ),
            (ErrorEventCode::InvalidScope, refusal.clone()),
            (ErrorEventCode::InvalidScope, refusal)
        ]
    );
    assert_eq!(page.tm.rev(), 0, "nothing registered");
    let mut dev = Page::with_config(Config {
        dev: true,
        ..Config::default()
    });
    let error = dev.tm.create_scope(ScopeId::ROOT, "no spaces").err();
    assert_eq!(
        error.map(|e| e.code),
        Some(ErrorEventCode::InvalidName.into())
    );
}

#[test]
fn dev_mode_turns_misconfiguration_into_errors() {
    let mut page = Page::with_config(Config {
        dev: true,
        ..Config::default()
    });
    let error = page
        .tm
        .register(ScopeId::ROOT, tool("bad name"), 0)
        .err()
        .map(|e| e.code);
    assert_eq!(error, Some(ErrorEventCode::InvalidName.into()));
    let mut def = tool("remote");
    def.input_schema = Some(SchemaSpec::Json(
        json!({"$ref": "https://example.com/s.json"}),
    ));
    let error = page
        .tm
        .register(ScopeId::ROOT, def.clone(), 0)
        .err()
        .map(|e| e.code);
    assert_eq!(error, Some(ErrorEventCode::SchemaConversionFailed.into()));
    assert_eq!(page.tm.rev(), 0, "nothing registered");
    let mut prod = Page::new();
    prod.register(def);
    assert_eq!(prod.error_codes(), [ErrorEventCode::SchemaConversionFailed]);
    prod.describe("d", "remote");
    assert_eq!(
        prod.result("d")["data"]["inputSchema"],
        json!({}),
        "production registers it with {{}}"
    );
    let bad_policy = Config {
        dev: true,
        policy: json!({"human": {"x": "deny"}}),
        ..Config::default()
    };
    let core = toolmark_bridge::machine::Toolmark::new(
        bad_policy,
        Box::new(SeededRandom::new(1)),
        Box::new(RegexPatterns),
    );
    assert_eq!(
        core.err().map(|e| e.code),
        Some(ErrorEventCode::InvalidPolicy.into())
    );
}

/// Without random bytes the page has no `clientId`: `createToolmark`
/// throws `host_unsupported` (what the host lacks), naming itself.
#[test]
fn a_registry_without_random_bytes_is_refused_host_unsupported() {
    struct NoCrypto;
    impl toolmark_bridge::ids::RandomSource for NoCrypto {
        fn fill(&mut self, _: &mut [u8]) -> Result<(), toolmark_bridge::ids::RandomError> {
            Err(toolmark_bridge::ids::RandomError("no crypto".into()))
        }
    }
    let error = toolmark_bridge::machine::Toolmark::new(
        Config::default(),
        Box::new(NoCrypto),
        Box::new(RegexPatterns),
    )
    .err()
    .map(|e| (e.code.as_str(), e.message));
    assert_eq!(
        error,
        Some((
            "host_unsupported",
            "createToolmark: random source failed: no crypto".to_owned()
        ))
    );
}

/// A pattern the page's matcher cannot run: registration says so (dev:
/// thrown), and no input gets past it, even one the pattern sits under a
/// `not` for (an error there must not turn into "valid").
#[test]
fn a_refused_pattern_is_reported_at_registration_and_answers_every_call_invalid() {
    let mut def = tool("guarded");
    def.input_schema = Some(SchemaSpec::Json(json!({
        "type": "object",
        "properties": {"path": {"type": "string", "not": {"pattern": "(?<=a)b"}}},
    })));
    let mut dev = Page::with_config(Config {
        dev: true,
        ..Config::default()
    });
    let error = dev.tm.register(ScopeId::ROOT, def.clone(), 0).err();
    assert_eq!(
        error.as_ref().map(|e| e.code),
        Some(ErrorEventCode::SchemaConversionFailed.into())
    );
    let message = error.map(|e| e.message).unwrap_or_default();
    assert!(
        message.starts_with("tool 'guarded': its input schema's pattern \"(?<=a)b\" is refused: "),
        "{message}"
    );
    assert_eq!(dev.tm.rev(), 0, "nothing registered");
    let mut prod = Page::new();
    prod.register(def);
    assert_eq!(prod.error_codes(), [ErrorEventCode::SchemaConversionFailed]);
    prod.call("c1", "guarded", json!({"path": "xb"}));
    assert!(prod.take_runs().is_empty(), "the tool never runs");
    let result = prod.result("c1");
    assert_eq!(result["status"], "invalid", "{result}");
    assert_eq!(result["issues"][0]["path"], "");
    let issue = result["issues"][0]["message"].as_str().unwrap_or_default();
    assert!(
        issue.starts_with(
            "the tool's input schema was refused at registration: pattern \"(?<=a)b\" is refused: "
        ),
        "{issue}"
    );
    prod.describe("d", "guarded");
    assert_eq!(prod.result("d")["data"]["inputSchema"], json!({}));
}

#[test]
fn policy_deny_is_not_allowed_and_bad_policies_are_reported() {
    let mut page = Page::with_config(Config {
        policy: json!({"inapp": {"untrustedContent": "deny", "consequential": "allow", "bogus": "allow"}}),
        confirm_mode: json!({"inapp": "inline"}),
        ..Config::default()
    });
    assert_eq!(
        page.error_codes(),
        [
            ErrorEventCode::InvalidPolicy,
            ErrorEventCode::InvalidPolicy,
            ErrorEventCode::InvalidConfirmMode
        ]
    );
    let mut reader = tool("read.page");
    reader.hints.untrusted_content = Some(true);
    page.register(reader);
    page.call("r", "read.page", json!({}));
    assert_eq!(page.result("r")["code"], "not_allowed");
    let human = page
        .tm
        .call("read.page", "{}", Caller::Human, None, page.now);
    page.drain();
    let run = only_run(&mut page);
    page.ok(run, json!("text"));
    assert_eq!(
        page.completed(human),
        Some(ToolResult::Ok {
            data: Some(json!("text").into())
        }),
        "policy binds the agent, not the human"
    );
    page.register(consequential("pay"));
    page.call("p", "pay", json!({}));
    assert_eq!(
        page.result("p")["status"],
        "needs_confirmation",
        "'allow' for consequential was refused"
    );
}

#[test]
fn without_a_confirmation_path_consequential_tools_are_not_allowed() {
    let mut page = Page::with_config(Config {
        confirm_mode: json!({"inapp": "none"}),
        ..Config::default()
    });
    page.register(consequential("pay"));
    assert_eq!(page.error_codes(), [ErrorEventCode::MissingConfirmHandler]);
    page.register(tool("read"));
    assert_eq!(
        page.error_codes(),
        [ErrorEventCode::MissingConfirmHandler],
        "a tool that needs no confirmation needs no path"
    );
    page.call("p", "pay", json!({}));
    assert_eq!(page.result("p")["code"], "not_allowed");
    let mut deferred = Page::new();
    deferred.register(consequential("pay"));
    assert_eq!(deferred.error_codes(), [], "deferred mode is a path");
    let mut dev = Page::with_config(Config {
        dev: true,
        confirm_mode: json!({"inapp": "none"}),
        ..Config::default()
    });
    let error = dev
        .tm
        .register(ScopeId::ROOT, consequential("pay"), 0)
        .err()
        .map(|e| e.code);
    assert_eq!(error, Some(ErrorEventCode::MissingConfirmHandler.into()));
}

#[test]
fn ctx_confirm_is_only_for_callers_with_an_inline_path() {
    let mut page = Page::with_config(Config {
        inline_confirm: true,
        ..Config::default()
    });
    page.register(tool("t"));
    page.call("a", "t", json!({}));
    let run = only_run(&mut page);
    assert_eq!(page.tm.ctx_confirm(run), None);
    page.drain();
    assert_eq!(page.error_codes(), [ErrorEventCode::CtxConfirmUnavailable]);
    page.tm.call("t", "{}", Caller::Human, None, page.now);
    page.ok(run, json!(null));
    let human_run = only_run(&mut page);
    assert_eq!(page.tm.ctx_confirm(human_run).as_deref(), Some("t"));
}

#[test]
fn only_a_boolean_true_answer_to_ctx_confirm_approves() {
    let mut page = Page::with_config(Config {
        inline_confirm: true,
        ..Config::default()
    });
    page.register(tool("t"));
    page.tm.call("t", "{}", Caller::Human, None, page.now);
    page.drain();
    let run = only_run(&mut page);
    assert!(page.tm.ctx_confirmed(run, Some(true)));
    assert!(!page.tm.ctx_confirmed(run, Some(false)));
    assert!(!page.tm.ctx_confirmed(run, None), "'yes', 1: no boolean");
    page.ok(run, json!(null));
    assert!(
        !page.tm.ctx_confirmed(run, Some(true)),
        "the run is over: its answer approves nothing"
    );
}

#[test]
fn the_tool_budget_warns_in_dev_mode_once_per_revision() {
    let mut page = Page::with_config(Config {
        dev: true,
        tool_budget: 2,
        ..Config::default()
    });
    for name in ["a", "b", "c", "d"] {
        page.register(tool(name));
    }
    assert_eq!(
        page.error_codes(),
        [
            ErrorEventCode::ToolBudgetExceeded,
            ErrorEventCode::ToolBudgetExceeded
        ]
    );
    let mut prod = Page::with_config(Config {
        tool_budget: 2,
        ..Config::default()
    });
    for name in ["a", "b", "c"] {
        prod.register(tool(name));
    }
    assert!(prod.error_codes().is_empty(), "dev only");
}

#[test]
fn tools_hidden_by_policy_do_not_count_toward_the_tool_budget() {
    let mut page = Page::with_config(Config {
        dev: true,
        tool_budget: 2,
        policy: json!({"inapp": {"destructive": "hide"}}),
        ..Config::default()
    });
    page.register(tool("one"));
    page.register(tool("two"));
    let mut hidden = tool("hidden");
    hidden.hints.destructive = Some(true);
    page.register(hidden);
    assert_eq!(
        page.error_codes(),
        [],
        "two visible tools are within the budget"
    );
    page.register(tool("three"));
    assert_eq!(
        page.errors(),
        [(
            ErrorEventCode::ToolBudgetExceeded,
            "3 tools are visible to the agent, over the budget of 2".to_owned()
        )]
    );
}

#[test]
fn the_undo_store_keeps_the_last_100_restorers() {
    let mut page = Page::new();
    let mut def = tool("edit");
    def.has_snapshot = true;
    page.register(def);
    let mut runs_of = Vec::new();
    for i in 0..101 {
        page.call(&format!("e{i}"), "edit", json!({}));
        let runs = page.take_runs();
        assert_eq!(runs[0].4, format!("e{i}"));
        runs_of.push(runs[0].0);
        page.ok(runs[0].0, json!(null));
    }
    assert!(page
        .actions
        .contains(&Action::DropRestorer { run: runs_of[0] }));
    let evicted = page.tm.undo("e0");
    let kept = page.tm.undo("e100");
    page.drain();
    assert!(matches!(
        page.completed(evicted),
        Some(ToolResult::Refused {
            code: toolmark_bridge::protocol::RefusedCode::UndoUnavailable,
            ..
        })
    ));
    assert!(page.completed(kept).is_none(), "its restorer runs");
    // A failed run keeps no restorer.
    page.call("f", "edit", json!({}));
    let run = only_run(&mut page);
    page.settle(run, Outcome::Threw("boom".into()));
    assert!(page.actions.contains(&Action::DropRestorer { run }));
    let none = page.tm.undo("f");
    page.drain();
    assert!(matches!(
        page.completed(none),
        Some(ToolResult::Refused { .. })
    ));
}

/// A snapshot that returned no function leaves no restorer: nothing to
/// keep, drop or run, and `tm.undo` of its call is `undo_unavailable`.
#[test]
fn a_snapshot_that_gives_no_restorer_leaves_its_call_no_undo() {
    let mut page = Page::new();
    let mut def = tool("edit");
    def.has_snapshot = true;
    page.register(def);

    page.call("a", "edit", json!({}));
    let run = only_run(&mut page);
    assert!(
        page.tm.handle_snapshot_taken(run, false, page.now),
        "the run goes on"
    );
    assert!(
        page.tm.handle_snapshot_taken(run, false, page.now),
        "told again: still its call's run"
    );
    page.drain();
    page.ok(run, json!(null));
    assert_eq!(page.result("a"), json!({"status": "ok", "data": null}));
    let undo = page.tm.undo("a");
    page.drain();
    assert!(matches!(
        page.completed(undo),
        Some(ToolResult::Refused {
            code: toolmark_bridge::protocol::RefusedCode::UndoUnavailable,
            ..
        })
    ));

    // Cancelled while its snapshot was taken: over as an abort, nothing to drop.
    page.call("b", "edit", json!({}));
    let run = only_run(&mut page);
    page.cancel("b");
    assert!(!page.tm.handle_snapshot_taken(run, false, page.now));
    page.drain();
    assert_eq!(
        page.result("b"),
        json!({"status": "cancelled", "by": "signal"})
    );
    assert!(
        !page
            .actions
            .iter()
            .any(|a| matches!(a, Action::Restore { .. } | Action::DropRestorer { .. })),
        "{:?}",
        page.actions
    );
}

#[test]
fn a_call_cancelled_while_its_snapshot_is_taken_never_runs_and_keeps_no_restorer() {
    let mut page = Page::with_config(Config {
        abort_grace_ms: 500,
        ..Config::default()
    });
    let mut def = tool("edit");
    def.has_snapshot = true;
    page.register(def);
    page.register(tool("plain"));

    // Its call still running: the run goes on, its restorer kept.
    page.call("z", "edit", json!({}));
    let going_on = only_run(&mut page);
    assert!(page.snapshot_taken(going_on), "still its call's run");
    assert!(page.results_for("z").is_empty());
    page.ok(going_on, json!(null));
    assert_eq!(page.result("z"), json!({"status": "ok", "data": null}));

    // Cancelled in its grace period: no run, and the run is over at once,
    // answered as its abort is.
    page.call("a", "edit", json!({}));
    let running = only_run(&mut page);
    page.cancel("a");
    assert!(page.results_for("a").is_empty(), "its grace period runs");
    assert!(!page.snapshot_taken(running));
    assert_eq!(
        page.result("a"),
        json!({"status": "cancelled", "by": "signal"})
    );
    assert!(page
        .actions
        .contains(&Action::DropRestorer { run: running }));
    let undo = page.tm.undo("a");
    page.drain();
    assert!(matches!(
        page.completed(undo),
        Some(ToolResult::Refused { .. })
    ));

    // Abandoned after its grace period: the snapshot settling later starts
    // nothing and answers nothing again; it is the run's late settling.
    page.call("b", "edit", json!({}));
    let abandoned = only_run(&mut page);
    page.cancel("b");
    page.advance(500);
    assert_eq!(
        page.result("b"),
        json!({"status": "cancelled", "by": "signal"})
    );
    page.events.clear();
    assert!(!page.snapshot_taken(abandoned));
    assert_eq!(page.results_for("b").len(), 1);
    assert_eq!(
        page.errors(),
        [(
            ErrorEventCode::LateResult,
            "tool 'edit' was aborted after its call was abandoned".to_owned()
        )]
    );

    // A run that asked for no snapshot, or is over, is left as it is.
    page.call("c", "plain", json!({}));
    let plain = only_run(&mut page);
    assert!(!page.snapshot_taken(plain));
    assert!(
        page.results_for("c").is_empty(),
        "a plain run is not stopped"
    );
    page.ok(plain, json!(null));
    assert_eq!(page.result("c"), json!({"status": "ok", "data": null}));
    page.call("d", "edit", json!({}));
    let done = only_run(&mut page);
    page.ok(done, json!(null));
    assert!(!page.snapshot_taken(done));
    assert_eq!(page.results_for("d").len(), 1);
}

#[test]
fn output_schemas_are_checked_in_dev_mode_only() {
    for dev in [true, false] {
        let mut page = Page::with_config(Config {
            dev,
            ..Config::default()
        });
        let mut def = tool("t");
        def.output_schema = Some(SchemaSpec::Json(json!({"type": "string"})));
        page.register(def);
        page.call("a", "t", json!({}));
        let run = only_run(&mut page);
        page.ok(run, json!(5));
        assert_eq!(page.result("a"), json!({"status": "ok", "data": 5}));
        let expected: &[ErrorEventCode] = if dev {
            &[ErrorEventCode::OutputInvalid]
        } else {
            &[]
        };
        assert_eq!(page.error_codes(), expected);
    }
}

#[test]
fn a_run_checks_its_output_only_in_dev_mode_with_a_standard_schema_output() {
    let external = || {
        Some(SchemaSpec::External {
            json: Some(json!({"type": "object"})),
        })
    };
    for (dev, output, check) in [
        (true, external(), true),
        (false, external(), false),
        (
            true,
            Some(SchemaSpec::Json(json!({"type": "object"}))),
            false,
        ),
        (true, None, false),
    ] {
        let mut page = Page::with_config(Config {
            dev,
            ..Config::default()
        });
        assert_eq!(page.tm.is_dev(), dev);
        let mut t = tool("t");
        t.output_schema = output.clone();
        page.register(t);
        page.call("a", "t", json!({}));
        let order = page.actions.iter().find_map(|action| match action {
            Action::Run(order) => Some(order.check_output),
            _ => None,
        });
        assert_eq!(order, Some(check), "dev {dev}, output {output:?}");
    }
}

#[test]
fn a_standard_schema_output_check_reports_its_first_issue_or_its_throw() {
    let mut page = Page::with_config(Config {
        dev: true,
        ..Config::default()
    });
    page.register(tool("t"));
    let issue = |path: &str, message: &str| Issue {
        path: path.into(),
        message: message.into(),
    };
    let checks = [
        (Ok(vec![]), None),
        (
            Ok(vec![issue("a.b", "must be a string"), issue("c", "other")]),
            Some("output of 't' fails its output schema at 'a.b': must be a string"),
        ),
        (
            Err("TypeError: boom".to_owned()),
            Some("output of 't' fails its output schema: its validator threw (TypeError: boom)"),
        ),
    ];
    for (id, (checked, expected)) in ["a", "b", "c"].into_iter().zip(checks) {
        page.events.clear();
        page.call(id, "t", json!({}));
        let run = only_run(&mut page);
        page.tm.handle_output_checked(run, checked);
        page.ok(run, json!(5));
        let expected: Vec<_> = expected
            .map(|message| (ErrorEventCode::OutputInvalid, message.to_owned()))
            .into_iter()
            .collect();
        assert_eq!(page.errors(), expected);
        assert_eq!(page.result(id), json!({"status": "ok", "data": 5}));
    }
}

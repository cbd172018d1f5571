//! Rule 7 and deferred confirmation.

use super::*;

#[test]
fn rule_7_consequential_and_destructive_tools_need_confirmation() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    let mut wipe = tool("wipe");
    wipe.hints.destructive = Some(true);
    page.register(wipe);
    page.call("a", "pay", json!({"amount": 5}));
    page.call("b", "wipe", json!({}));
    assert!(
        page.take_runs().is_empty(),
        "nothing runs for the agent without a human"
    );
    let id = confirm_id_of(&page.result("a"));
    assert_eq!(id.len(), 36, "a UUID");
    assert_eq!(page.result("a")["summary"], "Run pay");
    confirm_id_of(&page.result("b"));
    assert_eq!(page.tm.pending_confirmations().len(), 2);
    assert!(page.events.contains(&Event::PendingChanged));
}

#[test]
fn a_summary_alone_is_prepared_before_the_confirmation() {
    let mut page = Page::new();
    let mut def = consequential("pay");
    def.has_summary = true;
    page.register(def);
    page.call("c1", "pay", json!({"amount": 5}));
    let order = take_prepare(&mut page);
    assert_eq!(
        (order.summary, order.changes, order.state),
        (true, false, false)
    );
    assert!(page.results_for("c1").is_empty(), "not before the summary");
    answer_summary(&mut page, order.run, "Pay 5");
    assert_eq!(page.result("c1")["summary"], "Pay 5");
}

/// The summary is the tool's `summary()` when it has one, else its title,
/// else "Run <name>".
#[test]
fn a_tools_title_is_the_summary_when_it_has_no_summary_function() {
    let mut page = Page::new();
    let mut send = consequential("send");
    send.title = Some("Send the order".into());
    page.register(send);
    let mut profile = consequential("profile");
    profile.title = Some("Save the profile".into());
    profile.has_summary = true;
    page.register(profile);

    page.call("s", "send", json!({"order": 7}));
    assert!(
        page.actions.is_empty(),
        "nothing to prepare: {:?}",
        page.actions
    );
    let result = page.result("s");
    confirm_id_of(&result);
    assert_eq!(result["summary"], "Send the order");
    assert_eq!(page.tm.pending_confirmations()[0].summary, "Send the order");

    page.call("p", "profile", json!({}));
    let order = take_prepare(&mut page);
    assert!(order.summary);
    answer_summary(&mut page, order.run, "Save profile for a@b");
    assert_eq!(
        page.result("p")["summary"],
        "Save profile for a@b",
        "summary() before the title"
    );
}

#[test]
fn approval_runs_the_tool_as_human_and_sends_confirmed_after_the_result() {
    let mut page = Page::new();
    let mut def = consequential("signup.submit");
    def.has_summary = true;
    def.has_changes = true;
    def.has_snapshot = true;
    def.sensitive = vec!["password".into(), "card".into()];
    page.register(def);
    page.call("c1", "signup.submit", json!({"email": "a@b"}));
    let order = take_prepare(&mut page);
    assert_eq!(
        (order.summary, order.changes, order.state),
        (true, true, false)
    );
    page.tm.handle_prepared(
        order.run,
        Ok(Prepared {
            summary: Some("Create the account a@b".into()),
            changes: Some(vec![
                FieldChange {
                    path: "email".into(),
                    before: None,
                    after: Some(json!("a@b")),
                },
                FieldChange {
                    path: "password".into(),
                    before: Some(json!("old")),
                    after: Some(json!("hunter2")),
                },
                FieldChange {
                    path: "card.number".into(),
                    before: None,
                    after: Some(json!("4111")),
                },
                FieldChange {
                    path: "cardholder".into(),
                    before: None,
                    after: Some(json!("Ann")),
                },
            ]),
            state: None,
        }),
        page.now,
    );
    page.drain();
    let result = page.result("c1");
    let confirm_id = confirm_id_of(&result);
    assert_eq!(result["summary"], "Create the account a@b");
    assert_eq!(
        result["changes"],
        json!([
            {"path": "email", "after": "a@b"},
            {"path": "password", "before": "[redacted]", "after": "[redacted]"},
            {"path": "card.number", "after": "[redacted]"},
            {"path": "cardholder", "after": "Ann"}
        ])
    );
    let pending = page.tm.pending_confirmations();
    assert_eq!(pending[0].expires_at, page.now + 600_000);
    let handle = page.tm.confirm(&confirm_id, true, page.now);
    page.drain();
    let runs = page.take_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        (runs[0].1.as_str(), runs[0].3.as_str(), runs[0].4.as_str()),
        ("signup.submit", "human", "c1")
    );
    assert_eq!(runs[0].2, json!({"email": "a@b"}));
    let approved_run = runs[0].0;
    page.ok(runs[0].0, json!({"account": 42}));
    assert_eq!(
        page.confirmed_for(&confirm_id),
        [json!({"status": "ok", "data": {"account": 42}})]
    );
    assert_eq!(
        page.completed(handle),
        Some(ToolResult::Ok {
            data: Some(json!({"account": 42}).into())
        })
    );
    let result_at = page.sent.iter().position(|m| m["id"] == "c1");
    let confirmed_at = page.sent.iter().position(|m| m["type"] == "confirmed");
    assert!(result_at < confirmed_at);
    // Already used: refused, and no second confirmed.
    let again = page.tm.confirm(&confirm_id, true, page.now);
    page.drain();
    assert_eq!(
        page.completed(again),
        Some(ToolResult::Refused {
            code: toolmark_bridge::protocol::RefusedCode::ConfirmationExpired,
            message: "The confirmation expired or was already used".into(),
            rev: None
        })
    );
    assert_eq!(page.confirmed_for(&confirm_id).len(), 1);
    // The approved run's restorer is kept under the call's id.
    let undo = page.tm.undo("c1");
    page.drain();
    assert!(page
        .actions
        .iter()
        .any(|a| matches!(a, Action::Restore { restorer, .. } if *restorer == approved_run)));
    let Some(Action::Restore { run, .. }) = page.actions.pop() else {
        panic!()
    };
    page.tm.handle_restored(run, Ok(()));
    page.drain();
    assert_eq!(page.completed(undo), Some(ToolResult::Ok { data: None }));
}

#[test]
fn rejection_is_cancelled_operator() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    page.call("c", "pay", json!({}));
    let id = confirm_id_of(&page.result("c"));
    page.tm.confirm(&id, false, page.now);
    page.drain();
    assert_eq!(
        page.confirmed_for(&id),
        [json!({"status": "cancelled", "by": "operator"})]
    );
    assert!(page.take_runs().is_empty());
    assert!(page.tm.pending_confirmations().is_empty());
}

#[test]
fn an_approval_whose_tool_is_gone_is_refused_stale_not_cancelled() {
    let mut page = Page::new();
    let key = page.register(consequential("pay"));
    page.call("c", "pay", json!({}));
    let id = confirm_id_of(&page.result("c"));
    page.tm.unregister(key, page.now);
    page.drain();
    let handle = page.tm.confirm(&id, true, page.now);
    page.drain();
    let refused = page.confirmed_for(&id);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(
        (refused[0]["status"].as_str(), refused[0]["code"].as_str()),
        (Some("refused"), Some("stale"))
    );
    assert_eq!(refused[0]["rev"], page.tm.rev());
    assert!(page.take_runs().is_empty());
    assert!(matches!(
        page.completed(handle),
        Some(ToolResult::Refused { .. })
    ));
}

/// Calls `form.submit` as `id`, its form state `v1` when the confirmation
/// is asked for, and approves it: the confirmId, the approval's request
/// and the run that reads the form state again.
fn approved_form_submit(
    page: &mut Page,
    id: &str,
) -> (String, toolmark_bridge::machine::Handle, RunId) {
    page.call(id, "form.submit", json!({}));
    let order = take_prepare(page);
    assert!(order.state);
    page.tm.handle_prepared(
        order.run,
        Ok(Prepared {
            state: Some("v1".into()),
            ..Prepared::default()
        }),
        page.now,
    );
    page.drain();
    let confirm_id = confirm_id_of(&page.result(id));
    let handle = page.tm.confirm(&confirm_id, true, page.now);
    page.drain();
    let Some(Action::ReadState { run, .. }) = page.actions.pop() else {
        panic!("read state expected: {:?}", page.actions)
    };
    (confirm_id, handle, run)
}

/// The form state is read again at approval; a tool unregistered before
/// JS read it is gone since confirmation was requested.
#[test]
fn an_approval_whose_tool_went_before_its_form_state_was_read_is_refused_stale() {
    let mut page = Page::new();
    let mut def = consequential("form.submit");
    def.has_state = true;
    let key = page.register(def);
    let (id, handle, run) = approved_form_submit(&mut page, "c");
    page.tm.unregister(key, page.now);
    page.tm.handle_tool_gone(run, page.now);
    page.drain();
    assert_eq!(
        page.confirmed_for(&id),
        [json!({"status": "refused", "code": "stale",
            "message": "The tool is gone since confirmation was requested", "rev": page.tm.rev()})]
    );
    assert!(matches!(
        page.completed(handle),
        Some(ToolResult::Refused { .. })
    ));
    assert!(page.take_runs().is_empty());
}

#[test]
fn confirmations_expire_after_600000_ms_by_default() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    page.call("c", "pay", json!({}));
    let id = confirm_id_of(&page.result("c"));
    assert_eq!(page.deadline(), Some(page.now + 600_000));
    page.advance(599_999);
    assert!(page.confirmed_for(&id).is_empty());
    page.advance(1);
    assert_eq!(
        page.confirmed_for(&id),
        [
            json!({"status": "refused", "code": "confirmation_expired", "message": "The confirmation expired or was already used"})
        ]
    );
    let late = page.tm.confirm(&id, true, page.now);
    page.drain();
    assert!(matches!(
        page.completed(late),
        Some(ToolResult::Refused { .. })
    ));
    assert!(page.take_runs().is_empty());
    assert_eq!(page.deadline(), None);
}

#[test]
fn a_confirmed_whose_bridge_has_gone_goes_out_on_the_bridges_attached_then() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    page.call("a", "pay", json!({}));
    page.call("b", "pay", json!({}));
    page.call("c", "pay", json!({}));
    let approved = confirm_id_of(&page.result("a"));
    let rejected = confirm_id_of(&page.result("b"));
    let expired = confirm_id_of(&page.result("c"));
    let first = page.bridge;
    page.tm.detach(first, page.now);
    page.drain();
    let second = page.attach(BridgeOptions::default());
    let third = page.attach(BridgeOptions::default());
    page.tm.confirm(&approved, true, page.now);
    page.drain();
    let run = only_run(&mut page);
    page.ok(run, json!("paid"));
    page.tm.confirm(&rejected, false, page.now);
    page.drain();
    let confirmed = |page: &Page, bridge, id: &str| -> Vec<Value> {
        page.sent_on(bridge)
            .into_iter()
            .filter(|m| m["type"] == "confirmed" && m["confirmId"] == id)
            .map(|m| m["result"].clone())
            .collect()
    };
    for bridge in [second, third] {
        assert_eq!(
            confirmed(&page, bridge, &approved),
            [json!({"status": "ok", "data": "paid"})]
        );
        assert_eq!(
            confirmed(&page, bridge, &rejected),
            [json!({"status": "cancelled", "by": "operator"})]
        );
    }
    assert!(
        confirmed(&page, first, &approved).is_empty(),
        "not on the gone bridge"
    );
    // No bridge attached: dropped, but the page's list and events still move on.
    page.tm.detach(second, page.now);
    page.tm.detach(third, page.now);
    page.drain();
    let sent = page.sent_all.len();
    page.events.clear();
    page.advance(600_000);
    assert_eq!(page.sent_all.len(), sent, "nowhere to send it");
    assert!(page.tm.pending_confirmations().is_empty());
    assert!(page.events.contains(&Event::PendingChanged));
    // A bridge attached later does not get it.
    let fourth = page.attach(BridgeOptions::default());
    assert!(confirmed(&page, fourth, &expired).is_empty());
}

#[test]
fn the_101st_pending_confirmation_expires_the_oldest() {
    let mut page = Page::new();
    page.register(consequential("pay"));
    for i in 0..101 {
        page.call(&format!("c{i}"), "pay", json!({}));
    }
    assert_eq!(page.tm.pending_confirmation_count(), 100);
    let oldest = confirm_id_of(&page.result("c0"));
    assert_eq!(
        page.confirmed_for(&oldest)[0]["code"],
        "confirmation_expired"
    );
    let result_at = page.sent.iter().position(|m| m["id"] == "c0");
    let confirmed_at = page.sent.iter().position(|m| m["type"] == "confirmed");
    assert!(result_at < confirmed_at);
}

#[test]
fn a_form_changed_since_the_request_is_refused_stale() {
    let mut page = Page::new();
    let mut def = consequential("form.submit");
    def.has_state = true;
    page.register(def);
    for (id, later_state) in [("changed", "v2"), ("same", "v1")] {
        let (confirm_id, _, run) = approved_form_submit(&mut page, id);
        page.tm
            .handle_state(run, Ok(Some(later_state.into())), page.now);
        page.drain();
        if id == "changed" {
            assert!(page.take_runs().is_empty());
            assert_eq!(
                page.confirmed_for(&confirm_id),
                [
                    json!({"status": "refused", "code": "stale", "message": "Form changed since confirmation was requested", "rev": 1})
                ]
            );
        } else {
            assert_eq!(page.take_runs().len(), 1);
        }
    }
}

/// A confirmation created by a page-side call (`tm.call`) is answered to
/// that call alone: no `confirmed` goes out, even with a bridge attached.
#[test]
fn a_page_side_calls_confirmation_sends_no_confirmed_when_approved_or_rejected() {
    let mut page = Page::new();
    page.register(consequential("send"));
    let confirm_id_of_call = |page: &mut Page| {
        let handle = page
            .tm
            .call("send", r#"{"order":3}"#, Caller::Inapp, None, page.now);
        page.drain();
        match page.completed(handle) {
            Some(ToolResult::NeedsConfirmation { confirm_id, .. }) => confirm_id,
            other => panic!("needs_confirmation expected: {other:?}"),
        }
    };
    let confirmeds = |page: &Page| {
        page.sent_all
            .iter()
            .filter(|(_, m)| m["type"] == "confirmed")
            .count()
    };

    let approved = confirm_id_of_call(&mut page);
    let handle = page.tm.confirm(&approved, true, page.now);
    page.drain();
    let runs = page.take_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!((runs[0].1.as_str(), runs[0].3.as_str()), ("send", "human"));
    page.ok(runs[0].0, json!({"sent": 3}));
    assert_eq!(
        page.completed(handle),
        Some(ToolResult::Ok {
            data: Some(json!({"sent": 3}).into())
        })
    );
    assert_eq!(confirmeds(&page), 0, "none when approved");

    let rejected = confirm_id_of_call(&mut page);
    let handle = page.tm.confirm(&rejected, false, page.now);
    page.drain();
    assert_eq!(
        page.completed(handle),
        Some(ToolResult::Cancelled {
            by: toolmark_bridge::protocol::CancelledBy::Operator
        })
    );
    assert!(page.take_runs().is_empty());
    assert_eq!(confirmeds(&page), 0, "none when rejected");
    assert!(page.tm.pending_confirmations().is_empty());
}

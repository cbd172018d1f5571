//! Security MUSTs, each by a hostile client against a real server.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::{field, quick, TestServer};
use tokio_tungstenite::tungstenite::http::StatusCode;
use toolmark_demo_server::hub::{timeout_outcome, Config};
use toolmark_demo_server::store::Rejection;

#[tokio::test]
async fn sockets_need_a_known_session_cookie() {
    let server = TestServer::start(quick()).await;
    let ada = server.login("ada");
    let path = format!("/toolmark/ws?conversation={}", ada.key.conversation);
    for path in [
        path.clone(),
        format!("/chat/ws?conversation={}", ada.key.conversation),
    ] {
        assert_eq!(
            server.connect(&path, None, None).await.err(),
            Some(StatusCode::UNAUTHORIZED)
        );
        let forged = "toolmark_session=00000000-0000-4000-8000-000000000000";
        assert_eq!(
            server.connect(&path, Some(forged), None).await.err(),
            Some(StatusCode::UNAUTHORIZED)
        );
    }
    // A page of another site cannot ride on the user's cookie.
    assert_eq!(
        server
            .connect(&path, Some(&ada.cookie), Some("http://evil.example"))
            .await
            .err(),
        Some(StatusCode::FORBIDDEN)
    );
    let own_origin = format!("http://{}", server.addr);
    assert!(server
        .connect(&path, Some(&ada.cookie), Some(&own_origin))
        .await
        .is_ok());
}

#[tokio::test]
async fn sockets_for_another_users_conversation_are_refused() {
    let server = TestServer::start(quick()).await;
    let ada = server.login("ada");
    let bob = server.login("bob");
    for endpoint in ["/toolmark/ws", "/chat/ws"] {
        let path = format!("{endpoint}?conversation={}", ada.key.conversation);
        assert_eq!(
            server.connect(&path, Some(&bob.cookie), None).await.err(),
            Some(StatusCode::FORBIDDEN)
        );
        let unknown = format!("{endpoint}?conversation=nope");
        assert_eq!(
            server
                .connect(&unknown, Some(&ada.cookie), None)
                .await
                .err(),
            Some(StatusCode::FORBIDDEN)
        );
    }
    let path = format!("/api/transcript?conversation={}", ada.key.conversation);
    let (status, _, _) = server
        .http(
            &format!("GET {path} HTTP/1.1\r\nCookie: {}", bob.cookie),
            "",
        )
        .await;
    assert_eq!(status, 403);
}

/// A call in flight to ada's page, its id, and the task awaiting its outcome.
async fn call_in_flight(
    server: &TestServer,
    ada: &support::User,
    page: &mut support::Page,
) -> (String, tokio::task::JoinHandle<Value>) {
    let hub = server.hub().clone();
    let key = ada.key.clone();
    let task = tokio::spawn(async move {
        hub.page_call(&key, "signup.fill", json!({ "email": "ada@example.com" }))
            .await
    });
    let call = page.recv().await;
    assert_eq!(field(&call, "type"), "call");
    assert_eq!(field(&call, "clientId"), page.client_id);
    (field(&call, "id").to_owned(), task)
}

#[tokio::test]
async fn results_from_another_user_conversation_or_page_are_rejected() {
    let server = TestServer::start(quick()).await;
    let ada = server.login("ada");
    let bob = server.login("bob");
    let mut page = server.bound_page(&ada, "ada-page", 1).await;
    let (id, task) = call_in_flight(&server, &ada, &mut page).await;

    // Bob learned the id: as his own page, and as ada's clientId.
    let mut bob_page = server.page(&bob, "bob-page").await;
    bob_page
        .result(&id, json!({ "status": "ok", "data": "forged" }))
        .await;
    let mut bob_as_ada = server.page(&bob, "ada-page").await;
    bob_as_ada
        .result(&id, json!({ "status": "ok", "data": "forged" }))
        .await;
    // Ada's own second tab (same user and conversation, other clientId).
    let mut other_tab = server.page(&ada, "ada-other-tab").await;
    other_tab
        .result(&id, json!({ "status": "ok", "data": "forged" }))
        .await;
    // A socket speaks for one clientId only.
    page.result(&id, json!({ "status": "ok", "data": "genuine" }))
        .await;
    let mut switching = server.page(&ada, "ada-third").await;
    switching.manifest(0, json!([])).await;
    switching.socket.send(json!({ "protocol": 1, "type": "result", "clientId": "ada-page", "id": id, "result": { "status": "ok", "data": "forged" } })).await;

    let outcome = task.await.expect("call task");
    assert_eq!(outcome, json!({ "status": "ok", "data": "genuine" }));
    let rejections = server.rejections(4).await;
    assert!(
        rejections.contains(&Rejection::MismatchedCall),
        "{rejections:?}"
    );
    assert!(
        rejections.contains(&Rejection::ClientOfAnotherConversation),
        "{rejections:?}"
    );
    assert!(
        rejections.contains(&Rejection::ForeignClient),
        "{rejections:?}"
    );
    assert_eq!(
        rejections
            .iter()
            .filter(|r| **r == Rejection::MismatchedCall)
            .count(),
        2,
        "{rejections:?}"
    );
}

#[tokio::test]
async fn unknown_and_replayed_results_are_rejected() {
    let server = TestServer::start(quick()).await;
    let ada = server.login("ada");
    let mut page = server.bound_page(&ada, "ada-page", 1).await;

    // A result for an id never issued (a guessed or forged id).
    page.result(
        "00000000-0000-4000-8000-000000000000",
        json!({ "status": "ok" }),
    )
    .await;
    assert_eq!(server.rejections(1).await, vec![Rejection::UnknownCall]);

    // A replay of an answered call must not bind a second confirmId.
    let (id, task) = call_in_flight(&server, &ada, &mut page).await;
    page.needs_confirmation(&id, "k1").await;
    assert_eq!(field(&task.await.expect("call"), "confirmId"), "k1");
    page.needs_confirmation(&id, "k2").await;
    page.confirmed("k2", json!({ "status": "ok" })).await;
    assert_eq!(
        server.rejections(3).await,
        vec![
            Rejection::UnknownCall,
            Rejection::DuplicateResult,
            Rejection::UnknownConfirm
        ]
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(server.hub().transcript(&ada.key).is_empty());
}

#[tokio::test]
async fn a_missed_deadline_is_a_timeout_then_a_cancel_and_late_results_are_rejected() {
    let config = Config {
        call_deadline: Duration::from_millis(300),
        ..Config::default()
    };
    let server = TestServer::start(config).await;
    let ada = server.login("ada");
    let mut page = server.bound_page(&ada, "ada-page", 1).await;
    let (id, task) = call_in_flight(&server, &ada, &mut page).await;

    let outcome = tokio::time::timeout(Duration::from_secs(3), task).await;
    assert_eq!(
        outcome.expect("an outcome by the deadline").expect("call"),
        timeout_outcome()
    );
    let cancel = page.recv().await;
    assert_eq!(
        cancel,
        json!({ "protocol": 1, "type": "cancel", "clientId": "ada-page", "id": id })
    );
    page.needs_confirmation(&id, "late").await;
    page.confirmed("late", json!({ "status": "ok" })).await;
    assert_eq!(
        server.rejections(2).await,
        vec![Rejection::LateResult, Rejection::UnknownConfirm]
    );
}

/// A result that reaches the server after the deadline but before the
/// waiting call has seen its timer fire: the result is late, and the agent
/// must still get its timeout (never wait for an answer that will not come).
#[tokio::test]
async fn a_result_just_past_the_deadline_still_ends_the_call_with_a_timeout() {
    let config = Config {
        call_deadline: Duration::from_millis(100),
        ..Config::default()
    };
    let server = TestServer::start(config).await;
    let ada = server.login("ada");
    let mut page = server.bound_page(&ada, "ada-page", 1).await;
    let hub = server.hub().clone();
    let call = hub.page_call(&ada.key, "signup.fill", json!({}));
    tokio::pin!(call);
    // One poll sends the call; the call is not polled again until the end,
    // so its deadline timer cannot win the race with the result below.
    assert!(futures_util::FutureExt::now_or_never(&mut call).is_none());
    let sent = page.recv().await;
    assert_eq!(field(&sent, "type"), "call");
    tokio::time::sleep(Duration::from_millis(200)).await;
    page.result(field(&sent, "id"), json!({ "status": "ok" }))
        .await;
    assert_eq!(server.rejections(1).await, vec![Rejection::LateResult]);
    let outcome = tokio::time::timeout(Duration::from_secs(3), call).await;
    assert_eq!(
        outcome.expect("an outcome after the deadline"),
        timeout_outcome()
    );
}

#[tokio::test]
async fn confirmed_needs_a_confirm_id_seen_for_that_binding_and_is_single_use() {
    let server = TestServer::start(quick()).await;
    let ada = server.login("ada");
    let bob = server.login("bob");
    let mut page = server.bound_page(&ada, "ada-page", 1).await;

    // Never seen in a needs_confirmation.
    page.confirmed("never-seen", json!({ "status": "ok" }))
        .await;
    assert_eq!(server.rejections(1).await, vec![Rejection::UnknownConfirm]);

    let (id, task) = call_in_flight(&server, &ada, &mut page).await;
    page.needs_confirmation(&id, "k1").await;
    task.await.expect("call");

    // Seen, but for another page or another user.
    let mut other_tab = server.page(&ada, "ada-other-tab").await;
    other_tab.confirmed("k1", json!({ "status": "ok" })).await;
    let mut bob_page = server.page(&bob, "bob-page").await;
    bob_page.confirmed("k1", json!({ "status": "ok" })).await;
    assert_eq!(
        server.rejections(3).await,
        vec![
            Rejection::UnknownConfirm,
            Rejection::MismatchedConfirm,
            Rejection::MismatchedConfirm
        ]
    );

    page.confirmed("k1", json!({ "status": "ok" })).await;
    let acknowledged = |t: &[Value]| t.iter().any(|e| field(e, "kind") == "agent");
    let transcript = server.transcript_until(&ada.key, acknowledged).await;
    assert_eq!(field(&transcript[0], "kind"), "confirmation");
    assert_eq!(field(&transcript[0], "confirmId"), "k1");

    // The replay is rejected and starts no second acknowledgement.
    page.confirmed("k1", json!({ "status": "ok" })).await;
    assert_eq!(
        server.rejections(4).await.last(),
        Some(&Rejection::DuplicateConfirmed)
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(server.hub().transcript(&ada.key).len(), 2);
}

#[tokio::test]
async fn oversized_frames_are_dropped() {
    let server = TestServer::start(quick()).await;
    let ada = server.login("ada");
    let mut page = server.page(&ada, "ada-page").await;
    let padding = "x".repeat(toolmark_demo_server::protocol::MAX_INBOUND_BYTES);
    let tools = json!([{ "name": "signup.fill", "llmName": "signup__fill", "description": padding, "hints": {} }]);
    page.manifest(1, tools).await;
    assert!(page.recv_within(Duration::from_secs(2)).await.is_none());
    assert_eq!(server.hub().store().active_client(&ada.key), None);
}

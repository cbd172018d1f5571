//! The Echo mode's endpoints: private-channel authorization and the page's
//! POSTs, each refused for a hostile client. (Publishing to soketi is not
//! tested here: no Pusher server runs in these tests.)

mod support;

use std::sync::Arc;

use serde_json::{json, Value};
use support::{quick, signup_tools, TestServer, User};
use toolmark_demo_server::agent::ScriptedAgent;
use toolmark_demo_server::echo::{channel_auth, Echo, EchoConfig};
use toolmark_demo_server::store::Rejection;

async fn echo_server() -> TestServer {
    let config = EchoConfig {
        app_id: "app".into(),
        key: "app-key".into(),
        secret: "app-secret".into(),
        // Nothing listens there: publishing fails, which these tests do not reach.
        api_url: "http://127.0.0.1:9".into(),
    };
    TestServer::with_echo(quick(), Arc::new(ScriptedAgent), Some(Echo::new(config))).await
}

async fn channel_auth_request(
    server: &TestServer,
    cookie: Option<&str>,
    socket_id: &str,
    channel: &str,
) -> (u16, String) {
    let cookie = cookie
        .map(|c| format!("\r\nCookie: {c}"))
        .unwrap_or_default();
    let head = format!("POST /broadcasting/auth HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded{cookie}");
    let (status, _, body) = server
        .http(
            &head,
            &format!("socket_id={socket_id}&channel_name={channel}"),
        )
        .await;
    (status, body)
}

/// The status the channel authorization route answers.
async fn auth_status(
    server: &TestServer,
    cookie: Option<&str>,
    socket_id: &str,
    channel: &str,
) -> u16 {
    channel_auth_request(server, cookie, socket_id, channel)
        .await
        .0
}

#[tokio::test]
async fn private_channels_are_authorized_for_their_user_and_conversation_only() {
    let server = echo_server().await;
    let ada = server.login("ada");
    let bob = server.login("bob");
    let channel = format!("private-toolmark.ada.{}", ada.key.conversation);

    let (status, body) =
        channel_auth_request(&server, Some(&ada.cookie), "1234.1234", &channel).await;
    assert_eq!(status, 200);
    let body: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(
        body["auth"],
        channel_auth("app-key", "app-secret", "1234.1234", &channel)
    );

    assert_eq!(auth_status(&server, None, "1234.1234", &channel).await, 401);
    assert_eq!(
        auth_status(&server, Some(&bob.cookie), "1234.1234", &channel).await,
        403
    );
    // Bob's name on ada's conversation, and ada's name on bob's.
    let forged = format!("private-toolmark.bob.{}", ada.key.conversation);
    assert_eq!(
        auth_status(&server, Some(&bob.cookie), "1234.1234", &forged).await,
        403
    );
    let other = format!("private-toolmark.ada.{}", bob.key.conversation);
    assert_eq!(
        auth_status(&server, Some(&ada.cookie), "1234.1234", &other).await,
        403
    );
    assert_eq!(
        auth_status(&server, Some(&ada.cookie), "1234.1234", "private-other").await,
        403
    );
    assert_eq!(
        auth_status(&server, Some(&ada.cookie), "1.1:x", &channel).await,
        403
    );
}

fn xsrf(server: &TestServer, user: &User) -> String {
    let token = user.cookie.trim_start_matches("toolmark_session=");
    server.state.accounts.xsrf_token(token).expect("session")
}

async fn post(
    server: &TestServer,
    user: &User,
    conversation: &str,
    xsrf: Option<&str>,
    message: Value,
) -> u16 {
    let xsrf = xsrf
        .map(|t| format!("\r\nX-XSRF-TOKEN: {t}"))
        .unwrap_or_default();
    let head = format!(
        "POST /toolmark/bridge?conversation={conversation} HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nX-Requested-With: XMLHttpRequest\r\nCookie: {}{xsrf}",
        user.cookie
    );
    server.http(&head, &message.to_string()).await.0
}

#[tokio::test]
async fn posts_need_the_session_its_conversation_and_its_csrf_token() {
    let server = echo_server().await;
    let ada = server.login("ada");
    let bob = server.login("bob");
    let token = xsrf(&server, &ada);
    let manifest = json!({ "protocol": 1, "type": "manifest", "clientId": "echo-page", "rev": 1, "tools": signup_tools() });

    let stranger = User {
        cookie: "toolmark_session=nope".into(),
        key: ada.key.clone(),
    };
    assert_eq!(
        post(
            &server,
            &stranger,
            &ada.key.conversation,
            Some(&token),
            manifest.clone()
        )
        .await,
        401
    );
    assert_eq!(
        post(
            &server,
            &bob,
            &ada.key.conversation,
            Some(&xsrf(&server, &bob)),
            manifest.clone()
        )
        .await,
        403
    );
    assert_eq!(
        post(&server, &ada, &ada.key.conversation, None, manifest.clone()).await,
        419
    );
    assert_eq!(
        post(
            &server,
            &ada,
            &ada.key.conversation,
            Some(&xsrf(&server, &bob)),
            manifest.clone()
        )
        .await,
        419
    );
    assert_eq!(server.hub().store().active_client(&ada.key), None);

    assert_eq!(
        post(&server, &ada, &ada.key.conversation, Some(&token), manifest).await,
        204
    );
    assert_eq!(
        server.hub().store().active_client(&ada.key).as_deref(),
        Some("echo-page")
    );

    // Posted messages meet the same checks as socket frames.
    let unseen = json!({ "protocol": 1, "type": "confirmed", "clientId": "echo-page", "confirmId": "k", "result": { "status": "ok" } });
    assert_eq!(
        post(&server, &ada, &ada.key.conversation, Some(&token), unseen).await,
        204
    );
    let forged = json!({ "protocol": 1, "type": "result", "clientId": "echo-page", "id": "00000000-0000-4000-8000-000000000000", "result": { "status": "ok" } });
    assert_eq!(
        post(&server, &ada, &ada.key.conversation, Some(&token), forged).await,
        204
    );
    let bob_token = xsrf(&server, &bob);
    let hijack = json!({ "protocol": 1, "type": "manifest", "clientId": "echo-page", "rev": 2, "tools": [] });
    assert_eq!(
        post(
            &server,
            &bob,
            &bob.key.conversation,
            Some(&bob_token),
            hijack
        )
        .await,
        204
    );
    assert_eq!(
        server.hub().rejections(),
        vec![
            Rejection::UnknownConfirm,
            Rejection::UnknownCall,
            Rejection::ClientOfAnotherConversation
        ]
    );
}

//! The binary as the demo runs it: `--port 0 --static DIR` prints its URL
//! and serves the directory next to the endpoints.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

#[test]
fn prints_its_url_and_serves_the_static_directory() {
    let dir = std::env::temp_dir().join(format!("toolmark-static-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("static dir");
    std::fs::write(dir.join("index.html"), "<h1>the demo page</h1>").expect("index.html");
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolmark-demo-server"))
        .args(["--port", "0", "--static"])
        .arg(&dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("PUSHER_APP_ID")
        .stdout(Stdio::piped())
        .spawn()
        .expect("server starts");
    let mut line = String::new();
    if let Some(stdout) = child.stdout.take() {
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("first line");
    }
    let url = line
        .trim()
        .strip_prefix("Toolmark demo server: ")
        .unwrap_or("")
        .to_owned();
    let host = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();

    let get = |path: &str| {
        let mut stream = TcpStream::connect(&host).expect("connect");
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .expect("request");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("response");
        response
    };
    let page = get("/");
    let session = get("/api/session");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);

    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.ends_with("<h1>the demo page</h1>"), "{page}");
    assert!(session.starts_with("HTTP/1.1 204"), "{session}");
}

/// On loopback (the default) the server answers only requests named for
/// this machine: a page of another site whose name an attacker points at
/// 127.0.0.1 (DNS rebinding) is same-origin with whatever it loads from
/// there, so the Origin check alone would let it sign in, drive the agent
/// and spend the configured model.
#[test]
fn on_loopback_a_request_for_another_host_name_is_refused() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolmark-demo-server"))
        .args(["--port", "0"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("PUSHER_APP_ID")
        .stdout(Stdio::piped())
        .spawn()
        .expect("server starts");
    let mut line = String::new();
    if let Some(stdout) = child.stdout.take() {
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("first line");
    }
    let addr = line
        .trim()
        .trim_start_matches("Toolmark demo server: http://")
        .trim_end_matches('/')
        .to_owned();
    let port = addr.rsplit(':').next().unwrap_or("").to_owned();
    let login = |host: &str| {
        let mut stream = TcpStream::connect(&addr).expect("connect");
        let body = r#"{"user":"ada"}"#;
        write!(
            stream,
            "POST /api/login HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("request");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("response");
        response
    };
    let rebound = login(&format!("attacker.example:{port}"));
    let by_address = login(&addr);
    let by_name = login(&format!("localhost:{port}"));
    let _ = child.kill();
    let _ = child.wait();

    assert!(rebound.starts_with("HTTP/1.1 403"), "{rebound}");
    assert!(by_address.starts_with("HTTP/1.1 200"), "{by_address}");
    assert!(by_name.starts_with("HTTP/1.1 200"), "{by_name}");
}

/// On another loopback address (`--host 127.0.0.2`) the URL the server
/// prints is answered: its Host names the address the server listens on.
#[test]
fn on_another_loopback_address_the_printed_url_is_answered() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolmark-demo-server"))
        .args(["--host", "127.0.0.2", "--port", "0"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("PUSHER_APP_ID")
        .stdout(Stdio::piped())
        .spawn()
        .expect("server starts");
    let mut line = String::new();
    if let Some(stdout) = child.stdout.take() {
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("first line");
    }
    let addr = line
        .trim()
        .trim_start_matches("Toolmark demo server: http://")
        .trim_end_matches('/')
        .to_owned();
    let port = addr.rsplit(':').next().unwrap_or("").to_owned();
    let session = |host: &str| {
        let mut stream = TcpStream::connect(&addr).expect("connect");
        write!(
            stream,
            "GET /api/session HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .expect("request");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("response");
        response
    };
    let printed = session(&addr);
    let rebound = session(&format!("attacker.example:{port}"));
    let _ = child.kill();
    let _ = child.wait();

    assert!(addr.starts_with("127.0.0.2:"), "{line}");
    assert!(printed.starts_with("HTTP/1.1 204"), "{printed}");
    assert!(rebound.starts_with("HTTP/1.1 403"), "{rebound}");
}

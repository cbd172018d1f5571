//! The binary as the demo runs it: `--port 0 --static DIR` prints its URL
//! and serves the directory next to the endpoints.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

/// The server binary started with `args` (no model, no Pusher), stopped on
/// drop.
struct Server {
    child: Child,
    /// The first line it printed.
    line: String,
    /// `host:port` of the URL in that line.
    addr: String,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolmark-demo-server"))
            .args(args)
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
        Server { child, line, addr }
    }

    fn port(&self) -> &str {
        self.addr.rsplit(':').next().unwrap_or("")
    }

    /// The response to `request` (its head up to the blank line; `Host`
    /// and `Connection: close` added) sent to the server.
    fn send(&self, request: &str, host: &str, body: &str) -> String {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        write!(
            stream,
            "{request}\r\nHost: {host}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("request");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("response");
        response
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn prints_its_url_and_serves_the_static_directory() {
    let dir = std::env::temp_dir().join(format!("toolmark-static-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("static dir");
    std::fs::write(dir.join("index.html"), "<h1>the demo page</h1>").expect("index.html");
    let server = Server::start(&["--port", "0", "--static", &dir.to_string_lossy()]);
    let host = server.addr.as_str();
    let page = server.send("GET / HTTP/1.1", host, "");
    let session = server.send("GET /api/session HTTP/1.1", host, "");
    let _ = std::fs::remove_dir_all(&dir);

    assert!(
        server
            .line
            .trim()
            .starts_with("Toolmark demo server: http://127.0.0.1:"),
        "{}",
        server.line
    );
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
    let server = Server::start(&["--port", "0"]);
    let login = |host: &str| {
        let head = format!(
            "POST /api/login HTTP/1.1\r\nOrigin: http://{host}\r\nContent-Type: application/json"
        );
        server.send(&head, host, r#"{"user":"ada"}"#)
    };
    let rebound = login(&format!("attacker.example:{}", server.port()));
    let by_address = login(&server.addr);
    let by_name = login(&format!("localhost:{}", server.port()));

    assert!(rebound.starts_with("HTTP/1.1 403"), "{rebound}");
    assert!(by_address.starts_with("HTTP/1.1 200"), "{by_address}");
    assert!(by_name.starts_with("HTTP/1.1 200"), "{by_name}");
}

/// On another loopback address (`--host 127.0.0.2`) the URL the server
/// prints is answered: its Host names the address the server listens on.
#[test]
fn on_another_loopback_address_the_printed_url_is_answered() {
    let server = Server::start(&["--host", "127.0.0.2", "--port", "0"]);
    let session = |host: &str| server.send("GET /api/session HTTP/1.1", host, "");
    let printed = session(&server.addr);
    let rebound = session(&format!("attacker.example:{}", server.port()));

    assert!(server.addr.starts_with("127.0.0.2:"), "{}", server.line);
    assert!(printed.starts_with("HTTP/1.1 204"), "{printed}");
    assert!(rebound.starts_with("HTTP/1.1 403"), "{rebound}");
}

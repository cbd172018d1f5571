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

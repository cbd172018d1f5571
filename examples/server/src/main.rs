//! `toolmark-demo-server [--port N] [--host ADDR] [--static DIR]`: the
//! demo's server (on 127.0.0.1 unless `--host` says otherwise), with the
//! scripted agent, or the model the environment configures (src/model.rs).

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use toolmark_demo_server::agent::{Agent, ScriptedAgent};
use toolmark_demo_server::auth::Accounts;
use toolmark_demo_server::echo::{Echo, EchoConfig};
use toolmark_demo_server::hub::{Config, Hub};
use toolmark_demo_server::model::{ModelAgent, Provider};
use toolmark_demo_server::server::{local_hosts_only, router, AppState};
use toolmark_demo_server::store::MemoryStore;

const USAGE: &str = "usage: toolmark-demo-server [--port N] [--host ADDR] [--static DIR]";

/// The command line: where to listen, and the static files to serve.
struct Args {
    listen: SocketAddr,
    static_dir: Option<PathBuf>,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut port = 8080;
    let mut host = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let mut static_dir = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let value = args.next().ok_or("--port needs a number")?;
                port = value
                    .parse()
                    .map_err(|_| format!("--port: not a port: {value}"))?;
            }
            "--host" => {
                let value = args.next().ok_or("--host needs an address")?;
                host = value.parse().map_err(|_| {
                    format!("--host: not an IP address: {value} (e.g. 127.0.0.1, 0.0.0.0, ::)")
                })?;
            }
            "--static" => {
                static_dir = Some(PathBuf::from(
                    args.next().ok_or("--static needs a directory")?,
                ));
            }
            "--help" | "-h" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    Ok(Args {
        listen: SocketAddr::new(host, port),
        static_dir,
    })
}

/// Why the server cannot listen on `addr`, and which option changes it.
fn listen_failure(addr: SocketAddr, error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::AddrInUse => format!(
            "cannot listen on {addr}: the port is in use; pass --port N for another \
             (--port 0: a free one)"
        ),
        io::ErrorKind::AddrNotAvailable => format!(
            "cannot listen on {addr}: not an address of this machine; pass --host with one \
             (127.0.0.1: this machine only; 0.0.0.0: every interface)"
        ),
        _ => format!("cannot listen on {addr}: {error}"),
    }
}

/// The URL to open for a server listening on `addr`: a browser cannot open
/// the unspecified address (0.0.0.0, ::), so that one is shown as loopback.
fn url_of(addr: SocketAddr) -> String {
    let shown = match addr.ip() {
        ip if ip.is_unspecified() && ip.is_ipv4() => {
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), addr.port())
        }
        ip if ip.is_unspecified() => {
            SocketAddr::new(IpAddr::V6(std::net::Ipv6Addr::LOCALHOST), addr.port())
        }
        _ => addr,
    };
    format!("http://{shown}/")
}

#[tokio::main]
async fn main() -> ExitCode {
    let Args { listen, static_dir } = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    if let Some(dir) = &static_dir {
        if !dir.is_dir() {
            eprintln!("--static: not a directory: {}", dir.display());
            return ExitCode::from(2);
        }
    }
    let agent: Arc<dyn Agent> = match Provider::from_env() {
        Some(provider) => {
            println!("Agent: {}", provider.describe());
            Arc::new(ModelAgent::new(provider))
        }
        None => Arc::new(ScriptedAgent),
    };
    let echo = EchoConfig::from_env().map(|config| {
        println!("Echo mode: publishing to {}", config.api_url);
        Echo::new(config)
    });
    let hub = Hub::new(Arc::new(MemoryStore::new()), agent, Config::default());
    let state = Arc::new(AppState {
        hub,
        accounts: Arc::new(Accounts::default()),
        echo,
    });
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("{}", listen_failure(listen, &error));
            return ExitCode::FAILURE;
        }
    };
    let addr = match listener.local_addr() {
        Ok(addr) => addr,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    if addr.ip().is_unspecified() {
        println!("Listening on {addr}: every interface of this machine");
    }
    println!("Toolmark demo server: {}", url_of(addr));
    let app = router(state, static_dir);
    let app = if addr.ip().is_loopback() {
        local_hosts_only(app, addr)
    } else {
        app
    };
    match axum::serve(listener, app).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("server stopped: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Args, String> {
        parse_args(list.iter().map(|arg| arg.to_string()))
    }

    #[test]
    fn listens_on_loopback_port_8080_unless_told() {
        let parsed = args(&[]).unwrap();
        assert_eq!(parsed.listen, "127.0.0.1:8080".parse().unwrap());
        let parsed = args(&["--host", "0.0.0.0", "--port", "0"]).unwrap();
        assert_eq!(parsed.listen, "0.0.0.0:0".parse().unwrap());
        let parsed = args(&["--host", "::1", "--port", "9000"]).unwrap();
        assert_eq!(parsed.listen, "[::1]:9000".parse().unwrap());
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        assert!(args(&["--host", "example.com"])
            .err()
            .unwrap()
            .contains("--host: not an IP address"));
        assert!(args(&["--host"])
            .err()
            .unwrap()
            .contains("--host needs an address"));
        assert!(args(&["--port", "x"])
            .err()
            .unwrap()
            .contains("--port: not a port"));
    }

    #[test]
    fn a_failure_to_listen_names_the_option_that_changes_it() {
        let addr: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let in_use = listen_failure(addr, &io::Error::from(io::ErrorKind::AddrInUse));
        assert!(
            in_use.contains("127.0.0.1:8080") && in_use.contains("--port"),
            "{in_use}"
        );
        let not_here = listen_failure(addr, &io::Error::from(io::ErrorKind::AddrNotAvailable));
        assert!(not_here.contains("--host"), "{not_here}");
    }

    #[test]
    fn the_url_of_every_interface_is_loopback() {
        assert_eq!(
            url_of("0.0.0.0:81".parse().unwrap()),
            "http://127.0.0.1:81/"
        );
        assert_eq!(url_of("[::]:81".parse().unwrap()), "http://[::1]:81/");
        assert_eq!(
            url_of("192.168.1.5:81".parse().unwrap()),
            "http://192.168.1.5:81/"
        );
    }
}

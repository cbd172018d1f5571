//! `toolmark-demo-server [--port N] [--static DIR]`: the demo's server on
//! 127.0.0.1, with the scripted agent, or the model the environment
//! configures (src/model.rs).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use toolmark_demo_server::agent::{Agent, ScriptedAgent};
use toolmark_demo_server::auth::Accounts;
use toolmark_demo_server::echo::{Echo, EchoConfig};
use toolmark_demo_server::hub::{Config, Hub};
use toolmark_demo_server::model::{ModelAgent, Provider};
use toolmark_demo_server::server::{router, AppState};
use toolmark_demo_server::store::MemoryStore;

const USAGE: &str = "usage: toolmark-demo-server [--port N] [--static DIR]";

fn parse_args() -> Result<(u16, Option<PathBuf>), String> {
    let mut port = 8080;
    let mut static_dir = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let value = args.next().ok_or("--port needs a number")?;
                port = value
                    .parse()
                    .map_err(|_| format!("--port: not a port: {value}"))?;
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
    Ok((port, static_dir))
}

#[tokio::main]
async fn main() -> ExitCode {
    let (port, static_dir) = match parse_args() {
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
    let listener =
        match tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await {
            Ok(listener) => listener,
            Err(error) => {
                eprintln!("cannot listen on 127.0.0.1:{port}: {error}");
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
    println!("Toolmark demo server: http://{addr}/");
    match axum::serve(listener, router(state, static_dir)).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("server stopped: {error}");
            ExitCode::FAILURE
        }
    }
}

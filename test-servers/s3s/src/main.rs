//! `zarrkit-s3s-server ROOT PORT ACCESS_KEY SECRET_KEY`: serves the
//! directory ROOT as an S3 endpoint (s3s-fs: one bucket per subdirectory) on
//! `127.0.0.1:PORT`, accepting only requests signed with the given
//! credentials. `scripts/servers.sh` starts it for the remote-store tests;
//! it stops on SIGINT or SIGTERM.

use std::path::PathBuf;
use std::process::ExitCode;

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};

const USAGE: &str = "usage: zarrkit-s3s-server ROOT PORT ACCESS_KEY SECRET_KEY";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, port, access_key, secret_key] = args.as_slice() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let Ok(port) = port.parse::<u16>() else {
        eprintln!("zarrkit-s3s-server: not a port number: {port:?}\n{USAGE}");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("zarrkit-s3s-server: cannot start the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let root = PathBuf::from(root);
    match runtime.block_on(serve(root, port, access_key, secret_key)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("zarrkit-s3s-server: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(
    root: PathBuf,
    port: u16,
    access_key: &str,
    secret_key: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let fs = s3s_fs::FileSystem::new(&root)
        .map_err(|err| format!("cannot serve {}: {err:?}", root.display()))?;
    let mut builder = S3ServiceBuilder::new(fs);
    builder.set_auth(SimpleAuth::from_single(access_key, secret_key));
    let service = builder.build();

    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|err| format!("cannot listen on 127.0.0.1:{port}: {err}"))?;
    eprintln!(
        "zarrkit-s3s-server: serving {} at http://{}",
        root.display(),
        listener.local_addr()?
    );

    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    loop {
        let socket = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => socket,
                Err(err) => {
                    eprintln!("zarrkit-s3s-server: accept: {err}");
                    continue;
                }
            },
            _ = terminate.recv() => return Ok(()),
            _ = interrupt.recv() => return Ok(()),
        };
        let service = service.clone();
        tokio::spawn(async move {
            // A client that hangs up mid-request is not the server's error.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(socket), service)
                .await;
        });
    }
}

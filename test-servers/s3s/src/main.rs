//! `zarrkit-s3s-server ROOT PORT ACCESS_KEY SECRET_KEY`: serves the
//! directory ROOT as an S3 endpoint (s3s-fs: one bucket per subdirectory) on
//! `127.0.0.1:PORT`, accepting only requests signed with the given
//! credentials. `scripts/servers.sh` starts it for the remote-store tests;
//! it stops on SIGINT or SIGTERM.
//!
//! One departure from plain s3s-fs: a GET or HEAD of a key that is a
//! directory on disk (`a` while `a/b` exists) answers 404 `NoSuchKey`, as S3
//! does, rather than s3s-fs's 500 (see [`DirectoryIsNoObject`]).

use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use s3s::access::S3Access;
use s3s::auth::SimpleAuth;
use s3s::dto::{GetObjectInput, HeadObjectInput};
use s3s::service::S3ServiceBuilder;
use s3s::{S3Request, S3Result, s3_error};
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
    builder.set_access(DirectoryIsNoObject { root: root.clone() });
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

/// s3s-fs keeps object `KEY` of bucket `BUCKET` in the file `ROOT/BUCKET/KEY`,
/// so once `a/b` exists, `ROOT/BUCKET/a` is a directory, which its GetObject
/// and HeadObject answer with a 500. S3 has no object `a` there: this hook
/// answers `NoSuchKey` (404) first.
///
/// It is s3s's access hook, which runs after the signature is checked and
/// the request parsed: an unsigned or wrongly signed request is still refused
/// (403) by the default `check`, which this keeps, before the disk is looked
/// at; the bucket and the key are s3s's own, percent-decoded. No other
/// operation (listings, bucket requests) is touched.
struct DirectoryIsNoObject {
    root: PathBuf,
}

impl DirectoryIsNoObject {
    async fn refuse_a_directory(&self, bucket: &str, key: &str) -> S3Result<()> {
        let Some(path) = object_path(&self.root, bucket, key) else {
            // Not a plain relative key: s3s-fs answers it as before.
            return Ok(());
        };
        match tokio::fs::metadata(&path).await {
            Ok(metadata) if metadata.is_dir() => Err(s3_error!(
                NoSuchKey,
                "The specified key does not exist: {key}"
            )),
            _ => Ok(()),
        }
    }
}

#[async_trait::async_trait]
impl S3Access for DirectoryIsNoObject {
    async fn get_object(&self, req: &mut S3Request<GetObjectInput>) -> S3Result<()> {
        self.refuse_a_directory(&req.input.bucket, &req.input.key)
            .await
    }

    async fn head_object(&self, req: &mut S3Request<HeadObjectInput>) -> S3Result<()> {
        self.refuse_a_directory(&req.input.bucket, &req.input.key)
            .await
    }
}

/// `ROOT/BUCKET/KEY`, or `None` when the bucket or the key has a component
/// other than a plain name (`..`, `.`, a leading `/`, an empty key), which
/// could name something outside the bucket.
fn object_path(root: &Path, bucket: &str, key: &str) -> Option<PathBuf> {
    let mut path = root.to_path_buf();
    for part in [bucket, key] {
        let mut any = false;
        for component in Path::new(part).components() {
            match component {
                Component::Normal(name) => path.push(name),
                _ => return None,
            }
            any = true;
        }
        if !any {
            return None;
        }
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::object_path;
    use std::path::{Path, PathBuf};

    #[test]
    fn object_paths_stay_in_the_bucket() {
        let root = Path::new("/srv");
        assert_eq!(
            object_path(root, "b", "a/c.d"),
            Some(PathBuf::from("/srv/b/a/c.d"))
        );
        assert_eq!(object_path(root, "b", "../x"), None);
        assert_eq!(object_path(root, "b", "a/../../x"), None);
        assert_eq!(object_path(root, "b", "/etc/passwd"), None);
        assert_eq!(object_path(root, "b", "./a"), None);
        assert_eq!(object_path(root, "b", ""), None);
        assert_eq!(object_path(root, "..", "a"), None);
    }
}

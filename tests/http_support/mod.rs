//! A static file server on 127.0.0.1 for the tests that download release artefacts (the
//! Action's install, the prebuilt pre-commit hook): GET /path serves ROOT/path, anything else is
//! a 404. One thread, one connection at a time, stopped when dropped; it counts the requests so
//! a test can assert that nothing was downloaded.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct FileServer {
    pub base: String,
    addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FileServer {
    pub fn start(root: &Path) -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let root: PathBuf = root.to_path_buf();
        let (s, r) = (stop.clone(), requests.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(conn) = conn
                    && let Some(path) = serve(conn, &root)
                {
                    r.lock().unwrap().push(path);
                }
            }
        });
        FileServer {
            base: format!("http://{addr}"),
            addr,
            stop,
            requests,
            thread: Some(thread),
        }
    }

    /// The paths requested so far.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Answers one request; returns its path.
fn serve(conn: TcpStream, root: &Path) -> Option<String> {
    conn.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let mut reader = BufReader::new(conn.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut header = String::new();
    while reader.read_line(&mut header).ok()? > 2 {
        header.clear();
    }
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next()?, parts.next()?.to_string());
    let file = root.join(path.trim_start_matches('/'));
    let body = (method == "GET" && !path.contains(".."))
        .then(|| std::fs::read(&file).ok())
        .flatten();
    let mut conn = conn;
    match body {
        Some(b) => {
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                b.len()
            );
            let _ = conn.write_all(&b);
        }
        None => {
            let _ = write!(
                conn,
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    }
    Some(path)
}

//! Running `rcip serve` in tests (`mod serving;`): the process and the address it printed,
//! and `POST /v1/operations` over plain HTTP/1.1 connections.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use rcip_test_support::header;
use serde_json::{Value, json};

/// A running `rcip serve` and the address it printed; killed if the test ends early.
pub struct Serving {
    pub child: Child,
    pub address: String,
    /// The lines printed before `listening on` (`metrics on ...`).
    pub printed: Vec<String>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `rcip serve` on 127.0.0.1 (any port) over `database` with the token `ada-token`
/// (human ada) and `args` besides; returns once it prints its address.
pub fn serve(database: &str, args: &[&std::ffi::OsStr]) -> Serving {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rcip"))
        .args(["serve", "--bind", "127.0.0.1:0", "--database", database])
        .args(["--insecure-dev-token", "ada-token=human:ada"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed = Vec::new();
    let address = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("no address printed after {printed:?}"))
            .unwrap();
        match line.trim().strip_prefix("listening on http://") {
            Some(address) => break address.to_owned(),
            None => printed.push(line),
        }
    };
    Serving {
        child,
        address,
        printed,
    }
}

impl Serving {
    /// Sends the process SIGTERM.
    pub fn terminate(&self) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success(), "kill -TERM {pid}: {sent}");
    }
}

/// Writes one `POST /v1/operations` on `stream` (kept alive).
pub fn send(stream: &mut TcpStream, operation: &str, arguments: Value) {
    let body = json!({"operation": operation, "arguments": arguments}).to_string();
    let request = format!(
        "POST /v1/operations HTTP/1.1\r\nhost: rcip\r\nauthorization: Bearer ada-token\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
}

/// Reads an answer's head (to the blank line).
pub fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap()
}

/// Reads one answer from `stream`: status and body (the server sends a Content-Length).
pub fn receive(stream: &mut TcpStream) -> (u16, Value) {
    let head = read_head(stream);
    let status = head[9..12].parse().unwrap();
    let length: usize = header(&head, "content-length").unwrap().parse().unwrap();
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).unwrap();
    (status, serde_json::from_slice(&body).unwrap())
}

pub fn call(stream: &mut TcpStream, operation: &str, arguments: Value) -> (u16, Value) {
    send(stream, operation, arguments);
    receive(stream)
}

pub fn connect(address: &str) -> TcpStream {
    let stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
}

/// One call on a connection of its own.
pub fn call_once(address: &str, operation: &str, arguments: Value) -> (u16, Value) {
    call(&mut connect(address), operation, arguments)
}

/// A `GET` on a connection of its own: status and body (read to the close).
pub fn get(address: &str, path: &str) -> (u16, String) {
    let mut stream = connect(address);
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: rcip\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

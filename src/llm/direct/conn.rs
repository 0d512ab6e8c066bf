//! The direct stream's connections: TCP, TLS over it for `https`, and the one kept open
//! between requests to each server (each step of a turn is a request; a fresh TLS handshake
//! would add a round trip or two to each).

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore};

use super::http1::Target;

/// How long connecting (and the TLS handshake) may take, as for the other requests.
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The least time one address is given to connect.
const MIN_SHARE: Duration = Duration::from_secs(3);

/// How long a connection kept between requests stays usable: servers close idle ones after a
/// minute or so, and one closed under a request costs that request a retry.
const IDLE_FOR: Duration = Duration::from_secs(50);

/// The most one read of a plain connection takes: a fast stream's 20 ms are a few KB.
const READ_ROOM: usize = 64 * 1024;

/// Connections kept between requests, across servers.
const KEPT: usize = 4;

/// A connection to a model server, in TLS or not.
pub(super) struct Conn {
    /// The server and the roots its certificate was checked against: only a request with both
    /// the same takes it again.
    target: Key,
    sock: TcpStream,
    tls: Option<Box<ClientConnection>>,
    /// Room for a plain connection's reads, made at its first.
    scratch: Option<Vec<u8>>,
    /// Whether it came from the kept ones (a failure before the answer then means the server
    /// had closed it, and the request goes again on a fresh one).
    pub reused: bool,
}

/// Why a connection could not be made.
#[derive(Debug)]
pub(super) enum ConnectError {
    /// The host name did not resolve, or to no address.
    Resolve(io::Error),
    /// No address accepted the connection, or the TLS handshake failed.
    Io(io::Error),
}

impl Conn {
    /// Connects to `target` (TLS when it is `https`), blocking, within [`CONNECT_TIMEOUT`].
    pub fn open(target: &Target, roots: &Roots) -> Result<Self, ConnectError> {
        let host = target.host.trim_start_matches('[').trim_end_matches(']');
        let addrs: Vec<_> = (host, target.port)
            .to_socket_addrs()
            .map_err(ConnectError::Resolve)?
            .collect();
        let mut last = io::Error::new(io::ErrorKind::NotFound, "the name has no address");
        if addrs.is_empty() {
            return Err(ConnectError::Resolve(last));
        }
        let order = connect_order(&addrs);
        let share = (CONNECT_TIMEOUT / order.len().max(1) as u32).max(MIN_SHARE);
        let mut sock = None;
        for addr in &order {
            match TcpStream::connect_timeout(addr, share) {
                Ok(s) => {
                    sock = Some(s);
                    break;
                }
                Err(e) => last = e,
            }
        }
        let sock = sock.ok_or(ConnectError::Io(last))?;
        // The request goes out whole at once; small writes are not held back.
        sock.set_nodelay(true).map_err(ConnectError::Io)?;
        let mut conn = Self {
            target: key_of(target, roots),
            sock,
            tls: None,
            scratch: None,
            reused: false,
        };
        if target.tls {
            let name = ServerName::try_from(host.to_string())
                .map_err(|e| ConnectError::Io(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
            let tls = ClientConnection::new(roots.config(), name)
                .map_err(|e| ConnectError::Io(io::Error::other(e)))?;
            conn.tls = Some(Box::new(tls));
            conn.handshake().map_err(ConnectError::Io)?;
        }
        Ok(conn)
    }

    /// Completes the TLS handshake within [`CONNECT_TIMEOUT`].
    fn handshake(&mut self) -> io::Result<()> {
        self.sock.set_read_timeout(Some(CONNECT_TIMEOUT))?;
        self.sock.set_write_timeout(Some(CONNECT_TIMEOUT))?;
        if let Some(tls) = &mut self.tls {
            while tls.is_handshaking() {
                tls.complete_io(&mut self.sock)?;
            }
        }
        self.sock.set_read_timeout(None)?;
        self.sock.set_write_timeout(None)
    }

    /// Another handle on the socket, to shut it from another thread.
    pub fn handle(&self) -> io::Result<TcpStream> {
        self.sock.try_clone()
    }

    /// The socket, to wait on.
    pub fn socket(&self) -> &TcpStream {
        &self.sock
    }

    /// Writes `bytes` whole, blocking.
    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.sock.set_nonblocking(false)?;
        match &mut self.tls {
            None => self.sock.write_all(bytes),
            Some(tls) => {
                // rustls takes at most 64 KiB of plaintext at a time: what it took is sent
                // before the rest is given to it (a long conversation's request is larger).
                let mut rest = bytes;
                while !rest.is_empty() {
                    let took = tls.writer().write(rest)?;
                    rest = &rest[took..];
                    if took == 0 && !tls.wants_write() {
                        return Err(io::Error::new(
                            io::ErrorKind::WriteZero,
                            "the TLS connection took no more of the request",
                        ));
                    }
                    while tls.wants_write() {
                        tls.write_tls(&mut self.sock)?;
                    }
                }
                Ok(())
            }
        }?;
        // The answer is read without blocking, when the socket says it is ready.
        self.sock.set_nonblocking(true)
    }

    /// Reads what is ready now onto the end of `out` (blocking on nothing).
    pub fn read_ready(&mut self, out: &mut Vec<u8>) -> io::Result<Ready> {
        let start = out.len();
        match &mut self.tls {
            None => loop {
                let scratch = self.scratch.get_or_insert_with(|| vec![0; READ_ROOM]);
                match self.sock.read(scratch) {
                    Ok(0) if out.len() == start => return Ok(Ready::Closed),
                    Ok(n) => {
                        out.extend_from_slice(&scratch[..n]);
                        // A full read may have left more; less than the room emptied the
                        // socket .
                        if n < scratch.len() || out.len() - start >= super::BATCH_CAP {
                            return Ok(Ready::Read);
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock && out.len() == start => {
                        return Ok(Ready::Nothing);
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Ready::Read),
                    Err(e) => return Err(e),
                }
            },
            Some(tls) => {
                let mut closed = false;
                loop {
                    let got = match tls.read_tls(&mut self.sock) {
                        Ok(0) => {
                            closed = true;
                            false
                        }
                        Ok(_) => true,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => false,
                        Err(e) => return Err(e),
                    };
                    let state = tls.process_new_packets().map_err(io::Error::other)?;
                    let plain = state.plaintext_bytes_to_read();
                    if plain > 0 {
                        let at = out.len();
                        out.resize(at + plain, 0);
                        tls.reader().read_exact(&mut out[at..])?;
                    }
                    closed |= state.peer_has_closed();
                    // Records are read until the socket holds no more, or a batch's worth.
                    if closed || !got || out.len() - start >= super::BATCH_CAP {
                        break;
                    }
                }
                Ok(if out.len() > start {
                    Ready::Read
                } else if closed {
                    Ready::Closed
                } else {
                    Ready::Nothing
                })
            }
        }
    }

    /// Whether the server closed the connection, or sent something unasked, while it was kept.
    fn stale(&self) -> bool {
        let mut probe = [0u8; 1];
        !matches!(self.sock.peek(&mut probe), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }

    /// Closes the connection.
    pub fn close(self) {
        let _ = self.sock.shutdown(Shutdown::Both);
    }
}

/// The order `addrs` are tried in: the families alternate, the first address's first, so a
/// network where one family goes nowhere costs a share of the time, not all of it (the time is
/// shared by the addresses, as reqwest's connector shares it).
fn connect_order(addrs: &[SocketAddr]) -> Vec<SocketAddr> {
    let Some(lead) = addrs.first() else {
        return Vec::new();
    };
    let (first, other): (Vec<SocketAddr>, Vec<SocketAddr>) =
        addrs.iter().partition(|a| a.is_ipv6() == lead.is_ipv6());
    let mut order = Vec::with_capacity(addrs.len());
    for i in 0..first.len().max(other.len()) {
        order.extend(first.get(i));
        order.extend(other.get(i));
    }
    order
}

/// What a read found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Ready {
    /// Bytes (and maybe the close after them: the next read says).
    Read,
    /// Nothing yet.
    Nothing,
    /// The server closed the connection.
    Closed,
}

/// Which requests a connection may serve: scheme, host, port, and the roots (by identity).
type Key = (bool, String, u16, usize);

fn key_of(target: &Target, roots: &Roots) -> Key {
    let trust = roots.0.as_ref().map_or(0, |c| Arc::as_ptr(c) as usize);
    (target.tls, target.host.clone(), target.port, trust)
}

/// The certificates a TLS server's is checked against: the same roots as the other requests
/// (Mozilla's, built in), or others a test names.
#[derive(Clone)]
pub(super) struct Roots(Option<Arc<ClientConfig>>);

impl Roots {
    /// The built-in roots.
    pub fn builtin() -> Self {
        Self(None)
    }

    /// Only `certs` (DER), for a test's own certificate authority.
    #[cfg(test)]
    pub fn only(certs: &[Vec<u8>]) -> Self {
        let mut store = RootCertStore::empty();
        for cert in certs {
            store
                .add(rustls::pki_types::CertificateDer::from(cert.clone()))
                .expect("a test root");
        }
        Self(Some(Arc::new(config(store))))
    }

    fn config(&self) -> Arc<ClientConfig> {
        static BUILTIN: OnceLock<Arc<ClientConfig>> = OnceLock::new();
        match &self.0 {
            Some(config) => config.clone(),
            None => BUILTIN
                .get_or_init(|| {
                    let store = RootCertStore {
                        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
                    };
                    Arc::new(config(store))
                })
                .clone(),
        }
    }
}

fn config(roots: RootCertStore) -> ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map(|b| b.with_root_certificates(roots).with_no_client_auth())
        // The ring provider supports the default versions; this cannot fail.
        .unwrap_or_else(|_| unreachable!("ring supports TLS 1.2 and 1.3"));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

/// Connections kept between requests.
fn kept() -> &'static Mutex<Vec<(Conn, Instant)>> {
    static KEPT_CONNS: OnceLock<Mutex<Vec<(Conn, Instant)>>> = OnceLock::new();
    KEPT_CONNS.get_or_init(Default::default)
}

/// A kept connection to `target`, if one is still open.
pub(super) fn take(target: &Target, roots: &Roots) -> Option<Conn> {
    let key = key_of(target, roots);
    let mut kept = kept().lock().unwrap_or_else(|e| e.into_inner());
    let now = Instant::now();
    // The expired and the closed ones go.
    kept.retain(|(conn, since)| now.duration_since(*since) < IDLE_FOR && !conn.stale());
    let at = kept.iter().rposition(|(conn, _)| conn.target == key)?;
    let (mut conn, _) = kept.remove(at);
    conn.reused = true;
    Some(conn)
}

/// Keeps `conn` for the next request to its server.
pub(super) fn keep(conn: Conn) {
    let mut kept = kept().lock().unwrap_or_else(|e| e.into_inner());
    if kept.len() >= KEPT {
        let (oldest, _) = kept.remove(0);
        oldest.close();
    }
    kept.push((conn, Instant::now()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_families_alternate_from_the_first_address() {
        let a = |s: &str| s.parse::<SocketAddr>().expect("an address");
        let addrs = [a("[::1]:1"), a("[::2]:1"), a("[::3]:1"), a("10.0.0.1:1")];
        assert_eq!(
            connect_order(&addrs),
            [a("[::1]:1"), a("10.0.0.1:1"), a("[::2]:1"), a("[::3]:1")]
        );
        assert_eq!(connect_order(&[]), Vec::<SocketAddr>::new());
    }
}

//! Which addresses fetch_web_page may reach: public ones only, so a page cannot make MiniClaw
//! read the local machine, the local network or a cloud metadata service.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Which addresses fetch_web_page may reach: public ones, plus private ones when the person
/// allowed them all (`MINICLAW_ALLOW_PRIVATE_FETCH=1`) or named them as exceptions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    /// Every address is allowed.
    pub allow_private: bool,
    /// These addresses are allowed even though they are not public.
    pub exceptions: Vec<IpAddr>,
}

impl AddressPolicy {
    /// Why `ip` may not be reached, or `None` when it may.
    pub fn refusal(&self, ip: IpAddr) -> Option<&'static str> {
        if self.allow_private || self.exceptions.contains(&ip) {
            return None;
        }
        non_public_reason(ip)
    }
}

/// Why `ip` is not a public address, or `None` when it is.
pub fn non_public_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) => "a cloud metadata address",
        // Azure's WireServer, reachable from every Azure VM.
        _ if ip == Ipv4Addr::new(168, 63, 129, 16) => "a cloud metadata address",
        (0, _, _) => "an unspecified address",
        (127, _, _) => "a loopback address",
        (10, _, _) => "a private address",
        (172, 16..=31, _) => "a private address",
        (192, 168, _) => "a private address",
        (169, 254, _) => "a link-local address",
        (100, 64..=127, _) => "a shared (CGNAT) address",
        (192, 0, 0) => "a reserved address",
        (198, 18..=19, _) => "a reserved (benchmarking) address",
        (224..=239, _, _) => "a multicast address",
        (240..=255, _, _) => "a reserved or broadcast address",
        _ => return None,
    })
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Some("a cloud metadata address");
    }
    if ip.is_unspecified() {
        return Some("an unspecified address");
    }
    if ip.is_loopback() {
        return Some("a loopback address");
    }
    // An IPv4 address in IPv6 clothing is judged as IPv4.
    if let Some(v4) = embedded_v4(ip) {
        return v4_reason(v4);
    }
    let first = ip.segments()[0];
    // Teredo tunnels hide an IPv4 address (obfuscated) behind a relay: not worth telling apart.
    if first == 0x2001 && ip.segments()[1] == 0 {
        return Some("a Teredo tunnel address");
    }
    Some(match first {
        0xfc00..=0xfdff => "a unique-local address",
        0xfe80..=0xfebf => "a link-local address",
        0xfec0..=0xfeff => "a site-local address",
        0xff00..=0xffff => "a multicast address",
        _ => return None,
    })
}

/// The IPv4 address inside a mapped (`::ffff:a.b.c.d`), compatible, NAT64 or 6to4 address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let [.., a, b, c, d] = ip.octets();
    let tail = Ipv4Addr::new(a, b, c, d);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    if s[..6] == [0, 0, 0, 0, 0, 0] {
        return Some(tail);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail);
    }
    // IPv4-translated (`::ffff:0:a.b.c.d`) and local-use NAT64 (`64:ff9b:1::/48`).
    if s[..6] == [0, 0, 0, 0, 0xffff, 0] || s[..3] == [0x64, 0xff9b, 1] {
        return Some(tail);
    }
    if s[0] == 0x2002 {
        // 6to4: the IPv4 address is in bytes 2 to 5.
        let [_, _, a, b, c, d, ..] = ip.octets();
        return Some(Ipv4Addr::new(a, b, c, d));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(s: &str) -> Option<&'static str> {
        non_public_reason(s.parse().unwrap())
    }

    #[test]
    fn refuses_translated_tunnelled_and_azure_forms() {
        for s in [
            "64:ff9b:1::a9fe:a9fe",
            "::ffff:0:7f00:1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "168.63.129.16",
        ] {
            assert!(reason(s).is_some(), "{s} must be refused");
        }
    }

    #[test]
    fn refuses_every_non_public_range() {
        for s in [
            "127.0.0.1",
            "127.9.9.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "169.254.1.1",
            "0.0.0.0",
            "100.64.0.1",
            "100.127.255.254",
            "255.255.255.255",
            "::1",
            "::",
            "fd00:ec2::254",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "ff02::1",
        ] {
            assert!(reason(s).is_some(), "{s} should be refused");
        }
        assert_eq!(reason("169.254.169.254"), Some("a cloud metadata address"));
        assert_eq!(reason("fd00:ec2::254"), Some("a cloud metadata address"));
    }

    #[test]
    fn allows_public_addresses() {
        for s in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(reason(s), None, "{s} should be allowed");
        }
    }
}

use bytes::BytesMut;
use proptest::prelude::*;

use super::*;

fn target(tls: bool, port: u16) -> Target {
    Target {
        tls,
        host: "api.example.com".into(),
        port,
        path: "/v1/chat/completions?x=1".into(),
    }
}

#[test]
fn the_request_carries_the_key_the_host_and_the_body() {
    let bytes = request(&target(true, 443), "sk-abc", b"{\"a\":1}").expect("a request");
    let text = String::from_utf8(bytes).expect("ASCII");
    assert_eq!(
        text,
        "POST /v1/chat/completions?x=1 HTTP/1.1\r\nhost: api.example.com\r\n\
         authorization: Bearer sk-abc\r\naccept: text/event-stream\r\n\
         content-type: application/json\r\ncontent-length: 7\r\n\r\n{\"a\":1}"
    );
    let other_port = request(&target(false, 8080), "", b"").expect("a request");
    let text = String::from_utf8(other_port).expect("ASCII");
    assert!(
        text.contains("\r\nhost: api.example.com:8080\r\n"),
        "{text}"
    );
    assert!(!text.contains("authorization"), "no key, no header: {text}");
}

#[test]
fn a_key_with_a_line_break_adds_no_header_of_its_own() {
    for key in ["sk-1\r\nx-injected: 1", "sk-1\nx", "sk-\u{7f}", "sk-é"] {
        let refused = request(&target(true, 443), key, b"{}").expect_err("refused");
        assert!(
            !refused.0.contains("sk-"),
            "the key is not repeated: {}",
            refused.0
        );
    }
    let mut bad_path = target(true, 443);
    bad_path.path = "/v1 HTTP/1.1\r\nx: y".into();
    assert!(request(&bad_path, "k", b"{}").is_err());
}

fn head(text: &str) -> Head {
    parse_head(text.as_bytes())
        .expect("a valid head")
        .expect("a complete head")
        .0
}

#[test]
fn a_head_says_how_its_body_is_framed_and_whether_the_connection_stays() {
    let chunked = head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    assert_eq!(chunked.framing, Framing::Chunked);
    assert!(!chunked.close);
    let sized = head("HTTP/1.1 429 Too Many\r\nContent-Length: 12\r\nRetry-After: 3\r\n\r\n");
    assert_eq!(sized.framing, Framing::Length(12));
    assert_eq!(sized.status.as_u16(), 429);
    assert_eq!(
        sized.headers.get("retry-after").map(|v| v.as_bytes()),
        Some(&b"3"[..])
    );
    let closing = head("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\n");
    assert!(closing.close);
    let to_close = head("HTTP/1.1 200 OK\r\n\r\n");
    assert_eq!(to_close.framing, Framing::UntilClose);
    assert!(to_close.close);
    let old = head("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n");
    assert!(old.close, "HTTP/1.0 closes unless it says keep-alive");
    let gzip = head("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n");
    assert_eq!(gzip.framing, Framing::UntilClose, "a coding not understood");
    assert_eq!(
        head("HTTP/1.1 204 No Content\r\n\r\n").framing,
        Framing::Empty
    );
}

#[test]
fn a_head_is_read_when_whole_and_refused_when_broken_or_huge() {
    let text = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
    for cut in 0..text.len() - 2 {
        assert!(matches!(parse_head(&text[..cut]), Ok(None)), "cut at {cut}");
    }
    let (_, used) = parse_head(text).expect("valid").expect("whole");
    assert_eq!(&text[used..], b"hi");
    assert!(parse_head(b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
    assert!(
        parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n").is_err()
    );
    assert!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n").is_err());
    let mut huge = b"HTTP/1.1 200 OK\r\n".to_vec();
    while huge.len() < HEAD_CAP {
        huge.extend_from_slice(b"x-filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
    }
    assert!(
        parse_head(&huge).is_err(),
        "a head without an end is refused at the cap"
    );
}

/// Decodes `input` in pieces cut at `cuts`: the body and whether it was complete.
fn decode_in_pieces(
    framing: Framing,
    input: &[u8],
    cuts: &[usize],
) -> Result<(Vec<u8>, bool, usize), Malformed> {
    let mut decoder = Decoder::new(framing);
    let mut out = BytesMut::new();
    let mut used = 0;
    let mut from = 0;
    let mut ends: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    ends.sort_unstable();
    ends.push(input.len());
    for end in ends {
        if end < from {
            continue;
        }
        used += decoder.decode(&input[from..end], &mut out)?;
        from = end;
    }
    Ok((out.to_vec(), decoder.done(), used))
}

/// A chunked encoding of `pieces`, with extensions and trailers where asked.
fn chunked(pieces: &[Vec<u8>], extension: bool, trailer: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for piece in pieces.iter().filter(|p| !p.is_empty()) {
        out.extend_from_slice(format!("{:X}", piece.len()).as_bytes());
        if extension {
            out.extend_from_slice(b";name=value");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n");
    if trailer {
        out.extend_from_slice(b"x-trailer: 1\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

proptest! {
    #[test]
    fn a_chunked_body_decodes_the_same_however_its_bytes_arrive(
        pieces in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..12),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
        extension in any::<bool>(),
        trailer in any::<bool>(),
    ) {
        let body = chunked(&pieces, extension, trailer);
        let mut input = body.clone();
        input.extend_from_slice(b"HTTP/1.1 next");
        let (out, done, used) = decode_in_pieces(Framing::Chunked, &input, &cuts).expect("valid");
        prop_assert_eq!(out, pieces.concat());
        prop_assert!(done);
        prop_assert_eq!(used, body.len(), "what follows the body is left alone");
    }

    #[test]
    fn a_sized_body_ends_at_its_length(
        body in proptest::collection::vec(any::<u8>(), 0..500),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut input = body.clone();
        input.extend_from_slice(b"extra");
        let (out, done, used) = decode_in_pieces(Framing::Length(body.len() as u64), &input, &cuts)
            .expect("valid");
        prop_assert_eq!(out, body.clone());
        prop_assert!(done);
        prop_assert_eq!(used, body.len());
    }
}

#[test]
fn a_broken_chunked_body_is_refused() {
    for bad in [
        &b"zz\r\n"[..],
        b"\r\n",
        b"3\r\nabcd\r\n",
        b"1234567890abcdef0\r\n",
        b"3\rX",
    ] {
        let mut decoder = Decoder::new(Framing::Chunked);
        let refused = decoder.decode(bad, &mut BytesMut::new());
        assert!(refused.is_err(), "{:?}", String::from_utf8_lossy(bad));
    }
    let mut endless = b"5;".to_vec();
    endless.resize(LINE_CAP + 10, b'a');
    assert!(
        Decoder::new(Framing::Chunked)
            .decode(&endless, &mut BytesMut::new())
            .is_err()
    );
    let mut trailers = b"0\r\n".to_vec();
    while trailers.len() < LINE_CAP + 10 {
        trailers.extend_from_slice(b"x: y\r\n");
    }
    assert!(
        Decoder::new(Framing::Chunked)
            .decode(&trailers, &mut BytesMut::new())
            .is_err()
    );
}

#[test]
fn a_body_to_the_close_takes_everything() {
    let (out, done, _) =
        decode_in_pieces(Framing::UntilClose, b"data: x\n\n", &[3]).expect("valid");
    assert_eq!(out, b"data: x\n\n");
    assert!(!done, "only the close ends it");
}

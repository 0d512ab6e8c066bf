//! Turning a fetched body into text: the charset decoded, and HTML reduced to its title, readable
//! text and links with a real HTML parser, run within caps and a time budget (`html_parse`).

use std::sync::atomic::AtomicBool;

use encoding_rs::Encoding;
use scraper::{ElementRef, Html, Node};
use url::Url;

use super::html_parse::{self, Cut, ParseLimits};

/// Elements whose content is never readable text.
const DROPPED: [&str; 11] = [
    "script", "style", "nav", "header", "footer", "noscript", "svg", "head", "template", "iframe",
    "object",
];

/// Elements that start a new line of text.
const BLOCKS: [&str; 30] = [
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "td",
    "th",
    "table",
    "section",
    "article",
    "main",
    "aside",
    "blockquote",
    "pre",
    "dd",
    "dt",
    "dl",
    "hr",
    "figure",
    "figcaption",
    "address",
    "details",
];

/// A link on a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// Its text, white space folded.
    pub text: String,
    /// Its absolute URL.
    pub url: String,
}

/// What a page reduces to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageText {
    /// The `<title>`, if any.
    pub title: Option<String>,
    /// The readable text, lines of folded white space.
    pub text: String,
    /// Links in the readable part, in order, at most the limit asked for.
    pub links: Vec<Link>,
}

/// Decodes `bytes` by the charset of the `Content-Type` header, else a `<meta>` charset (HTML),
/// else a byte-order mark, else UTF-8; returns the text and the encoding's name.
pub fn decode(bytes: &[u8], content_type: &str, is_html: bool) -> (String, &'static str) {
    let from_header = charset_param(content_type).and_then(|l| Encoding::for_label(l.as_bytes()));
    let from_meta = if is_html && from_header.is_none() {
        meta_charset(bytes).and_then(|l| Encoding::for_label(l.as_bytes()))
    } else {
        None
    };
    let encoding = from_header.or(from_meta).unwrap_or(encoding_rs::UTF_8);
    // `decode` honours a byte-order mark over the label, as browsers do.
    let (text, used, _had_errors) = encoding.decode(bytes);
    (text.into_owned(), used.name())
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|part| {
        let (k, v) = part.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// The charset a `<meta>` tag declares in the first 2 KB (where the HTML standard looks).
fn meta_charset(bytes: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(2048)]).to_ascii_lowercase();
    let mut rest = head.as_str();
    while let Some(start) = rest.find("<meta") {
        let tag_end = rest[start..].find('>').map_or(rest.len(), |e| start + e);
        let tag = &rest[start..tag_end];
        if let Some(pos) = tag.find("charset") {
            let value = tag[pos + "charset".len()..]
                .trim_start()
                .strip_prefix('=')?
                .trim_start()
                .trim_start_matches(['"', '\'']);
            let label: String = value
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
                .collect();
            if !label.is_empty() {
                return Some(label);
            }
        }
        rest = &rest[tag_end..];
    }
    None
}

/// Folds every run of white space into one space and trims the ends.
pub fn fold_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Parses an HTML document within `limits` (setting `stop` ends the parse soon) into its title,
/// readable text and first `max_links` links. If the parse was cut, the page is what was parsed
/// before the cut, and the cut says why.
pub fn extract_bounded(
    html: &str,
    base: &Url,
    max_links: usize,
    limits: &ParseLimits,
    stop: &AtomicBool,
) -> (PageText, Option<Cut>) {
    let (doc, cut) = html_parse::parse_document(html, limits, stop);
    (page_of(&doc, base, max_links), cut)
}

fn page_of(doc: &Html, base: &Url, max_links: usize) -> PageText {
    let mut title: Option<String> = None;
    let mut raw = String::new();
    let mut links: Vec<Link> = Vec::new();
    let mut dropped_depth = 0usize;
    let mut pre_depth = 0usize;
    // An explicit stack instead of recursion: a hostile page may nest elements very deeply.
    let mut stack = vec![(doc.tree.root(), false)];
    while let Some((node, closing)) = stack.pop() {
        let name = match node.value() {
            Node::Element(e) => Some(e.name()),
            _ => None,
        };
        if closing {
            if let Some(name) = name {
                if name == "pre" {
                    pre_depth = pre_depth.saturating_sub(1);
                }
                if DROPPED.contains(&name) {
                    dropped_depth = dropped_depth.saturating_sub(1);
                } else if BLOCKS.contains(&name) {
                    raw.push('\n');
                }
            }
            continue;
        }
        match node.value() {
            // Line breaks in HTML source are plain white space, except inside <pre>.
            Node::Text(t) if dropped_depth == 0 && pre_depth > 0 => raw.push_str(t),
            Node::Text(t) if dropped_depth == 0 => raw.extend(
                t.chars()
                    .map(|c| if c == '\n' || c == '\r' { ' ' } else { c }),
            ),
            Node::Element(e) => {
                let name = e.name();
                if name == "title" && title.is_none() {
                    let t = ElementRef::wrap(node)
                        .map(|el| fold_whitespace(&el.text().collect::<String>()));
                    title = t.filter(|t| !t.is_empty());
                }
                if name == "pre" {
                    // Nesting comes from the page: saturate rather than overflow.
                    pre_depth = pre_depth.saturating_add(1);
                }
                if DROPPED.contains(&name) {
                    dropped_depth = dropped_depth.saturating_add(1);
                } else if BLOCKS.contains(&name) {
                    raw.push('\n');
                }
                if name == "a"
                    && dropped_depth == 0
                    && links.len() < max_links
                    && let Some(link) = link_of(node, base)
                    && !links.iter().any(|l| l.url == link.url)
                {
                    links.push(link);
                }
                stack.push((node, true));
                let children: Vec<_> = node.children().collect();
                for child in children.into_iter().rev() {
                    stack.push((child, false));
                }
            }
            Node::Document | Node::Fragment => {
                let children: Vec<_> = node.children().collect();
                for child in children.into_iter().rev() {
                    stack.push((child, false));
                }
            }
            _ => {}
        }
    }
    PageText {
        title,
        text: fold_lines(&raw),
        links,
    }
}

fn link_of(node: ego_tree::NodeRef<'_, Node>, base: &Url) -> Option<Link> {
    let el = ElementRef::wrap(node)?;
    let href = el.value().attr("href")?.trim();
    let url = base.join(href).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    Some(Link {
        text: fold_whitespace(&el.text().collect::<String>()),
        url: url.to_string(),
    })
}

/// Folds white space inside each line and drops empty lines.
pub fn fold_lines(raw: &str) -> String {
    raw.lines()
        .map(fold_whitespace)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Cuts `text` to at most `max_chars` characters; returns whether it was cut.
pub fn cut_chars(text: &str, max_chars: usize) -> (String, bool) {
    match text.char_indices().nth(max_chars) {
        Some((byte, _)) => (text[..byte].to_string(), true),
        None => (text.to_string(), false),
    }
}

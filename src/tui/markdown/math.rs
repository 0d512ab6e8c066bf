//! TeX math to Unicode for a terminal: `x^2` → x², `\alpha` → α, `\frac{a}{b}` → a/b. An
//! expression with a command this does not know is shown as its LaTeX source instead, so nothing
//! is silently dropped or half-translated.

/// The Unicode form of the TeX `src`, or the trimmed source when a part cannot be converted.
pub(crate) fn to_unicode(src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut p = Parser { chars, at: 0 };
    match p.expr(false) {
        Some(out) if p.at >= p.chars.len() => collapse_spaces(&out),
        _ => collapse_spaces(src),
    }
}

/// Runs of whitespace (newlines too) become one space; none at either end.
fn collapse_spaces(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    /// A sequence of atoms up to the end, or up to a closing `}` when `group` (which is eaten).
    fn expr(&mut self, group: bool) -> Option<String> {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            match c {
                '}' if group => {
                    self.at += 1;
                    return Some(out);
                }
                '}' => return None,
                c if c.is_whitespace() => {
                    self.at += 1;
                    // Source spacing is kept (as one space): `a \le b` reads as "a ≤ b".
                    if !out.ends_with(' ') {
                        out.push(' ');
                    }
                }
                '^' | '_' => {
                    self.at += 1;
                    let arg = self.argument()?;
                    out.push_str(&script(&arg, c == '^'));
                }
                _ => out.push_str(&self.atom()?),
            }
        }
        // A group must be closed.
        (!group).then_some(out)
    }

    /// One argument: a `{group}`, a command or one character (spaces before it skipped).
    fn argument(&mut self) -> Option<String> {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
        match self.peek()? {
            '{' => {
                self.at += 1;
                self.expr(true)
            }
            '}' | '^' | '_' => None,
            _ => self.atom(),
        }
    }

    /// A group, a command with its arguments, or one character.
    fn atom(&mut self) -> Option<String> {
        let c = self.peek()?;
        self.at += 1;
        match c {
            '{' => self.expr(true),
            '\\' => self.command(),
            '\'' => Some("′".into()),
            '*' => Some("∗".into()),
            '&' => None,
            '-' => Some("−".into()),
            c => Some(c.to_string()),
        }
    }

    /// The name after a backslash: letters, or one other character.
    fn name(&mut self) -> Option<String> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            self.at += 1;
        }
        if self.at == start {
            let c = self.peek()?;
            self.at += 1;
            return Some(c.to_string());
        }
        Some(self.chars[start..self.at].iter().collect())
    }

    /// The raw text of a `{...}` argument (for `\text`), braces balanced.
    fn raw_group(&mut self) -> Option<String> {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
        if self.peek()? != '{' {
            return self.atom();
        }
        self.at += 1;
        let mut depth = 1;
        let mut out = String::new();
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(out);
                    }
                }
                _ => {}
            }
            out.push(c);
        }
        None
    }

    fn command(&mut self) -> Option<String> {
        let name = self.name()?;
        if let Some(s) = symbol(&name) {
            return Some(s.to_string());
        }
        match name.as_str() {
            "frac" | "dfrac" | "tfrac" => {
                let a = self.argument()?;
                let b = self.argument()?;
                Some(format!("{}/{}", paren(&a), paren(&b)))
            }
            "sqrt" => {
                let root = if self.peek() == Some('[') {
                    self.at += 1;
                    let mut n = String::new();
                    while let Some(c) = self.peek() {
                        self.at += 1;
                        if c == ']' {
                            break;
                        }
                        n.push(c);
                    }
                    match n.trim() {
                        "3" => "∛".to_string(),
                        "4" => "∜".to_string(),
                        n => format!("{}√", script(n, true)),
                    }
                } else {
                    "√".to_string()
                };
                let arg = self.argument()?;
                Some(format!("{root}{}", paren(&arg)))
            }
            "text" | "textrm" | "textit" | "textbf" | "mbox" | "operatorname" => self.raw_group(),
            "mathrm" | "mathit" | "mathbf" | "boldsymbol" | "mathsf" | "mathtt" | "bm" => {
                self.argument()
            }
            "mathbb" => {
                let arg = self.argument()?;
                arg.chars().map(double_struck).collect()
            }
            "left" | "right" | "big" | "Big" | "bigg" | "Bigg" | "bigl" | "bigr" | "Bigl"
            | "Bigr" => {
                // The delimiter that follows is drawn as it is; `.` means none.
                let d = self.argument()?;
                Some(if d == "." { String::new() } else { d })
            }
            "vec" | "hat" | "bar" | "overline" | "dot" | "ddot" | "tilde" => {
                let arg = self.argument()?;
                let mark = match name.as_str() {
                    "vec" => '\u{20D7}',
                    "hat" => '\u{0302}',
                    "bar" | "overline" => '\u{0304}',
                    "dot" => '\u{0307}',
                    "ddot" => '\u{0308}',
                    _ => '\u{0303}',
                };
                // A combining mark only sits well on a single character.
                (arg.chars().count() == 1).then(|| format!("{arg}{mark}"))
            }
            _ => None,
        }
    }
}

/// `s` in parentheses when it is more than one term (so `\frac{a+b}{c}` reads (a+b)/c).
fn paren(s: &str) -> String {
    let s = s.trim();
    let mut depth = 0i32;
    let compound = s.chars().any(|c| {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ => {}
        }
        depth == 0 && (c.is_whitespace() || "+-−=<>≤≥≠±∓×÷⋅·/,;:→".contains(c))
    });
    if compound {
        format!("({s})")
    } else {
        s.to_string()
    }
}

/// A super- or subscript in Unicode when every character has a form, else `^x` / `_(xy)`.
fn script(s: &str, sup: bool) -> String {
    let s = s.trim();
    let mapped: Option<String> = s
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| if sup { superscript(c) } else { subscript(c) })
        .collect();
    match mapped {
        Some(m) if !m.is_empty() => m,
        _ => {
            let mark = if sup { '^' } else { '_' };
            if s.chars().count() == 1 {
                format!("{mark}{s}")
            } else {
                format!("{mark}({s})")
            }
        }
    }
}

/// Characters with a Unicode superscript form (`SUP_TO`, same position). There is no `q`.
const SUP_FROM: &str = "0123456789+-−=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVWαβγδεθιφχ′∗";
const SUP_TO: &str = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵅᵝᵞᵟᵋᶿᶥᵠᵡ′*";
/// Characters with a Unicode subscript form (`SUB_TO`, same position): Unicode has only these.
const SUB_FROM: &str = "0123456789+-−=()aehijklmnoprstuvxβγρφχ";
const SUB_TO: &str = "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ";

fn superscript(c: char) -> Option<char> {
    if c == '°' {
        return Some('°');
    }
    map_char(c, SUP_FROM, SUP_TO)
}

fn subscript(c: char) -> Option<char> {
    map_char(c, SUB_FROM, SUB_TO)
}

fn map_char(c: char, from: &str, to: &str) -> Option<char> {
    let i = from.chars().position(|f| f == c)?;
    to.chars().nth(i)
}

fn double_struck(c: char) -> Option<char> {
    Some(match c {
        'N' => 'ℕ',
        'Z' => 'ℤ',
        'Q' => 'ℚ',
        'R' => 'ℝ',
        'C' => 'ℂ',
        'P' => 'ℙ',
        'H' => 'ℍ',
        '1' => '𝟙',
        _ => return None,
    })
}

/// The Unicode for a command that stands for one symbol.
fn symbol(name: &str) -> Option<&'static str> {
    super::math_symbols::SYMBOLS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
}

#[cfg(test)]
mod tests {
    use super::to_unicode;

    #[test]
    fn scripts_greek_and_operators_become_unicode() {
        for (tex, want) in [
            ("x^2", "x²"),
            ("x_1", "x₁"),
            ("x^{n+1}", "xⁿ⁺¹"),
            ("\\alpha + \\beta", "α + β"),
            ("\\sqrt{2}", "√2"),
            ("\\sqrt{x+1}", "√(x+1)"),
            ("a \\le b", "a ≤ b"),
            ("a \\ge b \\ne c", "a ≥ b ≠ c"),
            ("2 \\times 3 \\cdot 4", "2 × 3 ⋅ 4"),
            ("\\pm \\infty", "± ∞"),
            ("\\sum_{i=1}^{n} i", "∑ᵢ₌₁ⁿ i"),
            ("\\int_0^1 f", "∫₀¹ f"),
            ("x \\to 0", "x → 0"),
            ("f \\rightarrow g", "f → g"),
            ("\\frac{a}{b}", "a/b"),
            ("\\frac{a+b}{2}", "(a+b)/2"),
            ("\\frac{x^2}{y_1}", "x²/y₁"),
            ("\\frac{1}{n + 1}", "1/(n + 1)"),
            ("E = mc^2", "E = mc²"),
            ("\\mathbb{R}^n", "ℝⁿ"),
            ("\\text{if } x", "if x"),
            ("\\Gamma(z)", "Γ(z)"),
        ] {
            assert_eq!(to_unicode(tex), want, "{tex}");
        }
    }

    #[test]
    fn script_tables_pair_up() {
        use super::{SUB_FROM, SUB_TO, SUP_FROM, SUP_TO};
        assert_eq!(SUP_FROM.chars().count(), SUP_TO.chars().count());
        assert_eq!(SUB_FROM.chars().count(), SUB_TO.chars().count());
        assert_eq!(to_unicode("x^{abz} y_{aex}"), "xᵃᵇᶻ yₐₑₓ");
    }

    #[test]
    fn scripts_without_a_unicode_form_keep_a_readable_ascii_form() {
        assert_eq!(to_unicode("x^q"), "x^q");
        assert_eq!(to_unicode("\\lim_{x \\to 0}"), "lim_(x → 0)");
    }

    #[test]
    fn what_cannot_be_converted_stays_latex_source() {
        assert_eq!(
            to_unicode("\\begin{pmatrix} a & b \\end{pmatrix}"),
            "\\begin{pmatrix} a & b \\end{pmatrix}"
        );
        assert_eq!(to_unicode("\\unknowncmd{x}"), "\\unknowncmd{x}");
        assert_eq!(to_unicode("x^{2"), "x^{2");
        assert_eq!(to_unicode("  a\n  b "), "a b");
    }
}

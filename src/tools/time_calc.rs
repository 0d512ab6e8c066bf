//! `get_current_time` (IANA time zones via chrono-tz) and `calculate_expression` (evalexpr).

use std::str::FromStr;

use chrono::{SecondsFormat, Utc};
use chrono_tz::{TZ_VARIANTS, Tz};
use evalexpr::{
    ContextWithMutableFunctions, ContextWithMutableVariables, DefaultNumericTypes, EvalexprError,
    Function, HashMapContext, Value as ExprValue,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::args::{parameters_of, parse_args};
use super::registry::{Tool, ToolContext, ToolError, ToolFuture, ToolRegistry};
use super::support::fields;
use crate::llm::ToolSchema;

/// The longest expression accepted, in characters.
pub const MAX_EXPRESSION_CHARS: usize = 1000;
/// The deepest parenthesis nesting accepted (the parser recurses on it).
const MAX_NESTING: usize = 64;
/// How many zone names an unknown-zone error suggests.
const MAX_SUGGESTIONS: usize = 5;

/// Adds this family's tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.register(GetCurrentTime);
    registry.register(CalculateExpression);
}

/// `get_current_time`: the time now in a time zone.
struct GetCurrentTime;

/// The arguments of `get_current_time`.
#[derive(Deserialize, JsonSchema)]
struct GetCurrentTimeArgs {
    /// IANA time zone name; UTC when absent.
    #[serde(default = "utc")]
    timezone: String,
}

/// The zone used when the call names none.
fn utc() -> String {
    "UTC".to_string()
}

impl Tool for GetCurrentTime {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "get_current_time".into(),
            description: "Get the current date and time in an IANA time zone (e.g. \
                \"Asia/Shanghai\", \"Europe/London\", \"America/New_York\"; default UTC): ISO \
                8601 time, UTC offset, weekday and zone abbreviation."
                .into(),
            parameters: parameters_of::<GetCurrentTimeArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let GetCurrentTimeArgs { timezone } = parse_args(args)?;
            // An empty name counts as absent.
            let name = Some(timezone.trim())
                .filter(|s| !s.is_empty())
                .unwrap_or("UTC");
            let tz = Tz::from_str(name).map_err(|_| ToolError::failed(unknown_zone(name)))?;
            let now = Utc::now().with_timezone(&tz);
            Ok(fields(json!({
                "timezone": tz.name(),
                "iso": now.to_rfc3339_opts(SecondsFormat::Secs, true),
                "utc_offset": now.format("%:z").to_string(),
                "abbreviation": now.format("%Z").to_string(),
                "weekday": now.format("%A").to_string(),
                "date": now.format("%Y-%m-%d").to_string(),
                "time": now.format("%H:%M:%S").to_string(),
                "unix_seconds": now.timestamp(),
            })))
        })
    }
}

/// The error text for an unknown zone, with the closest names.
fn unknown_zone(name: &str) -> String {
    let shown: String = name.chars().take(80).collect();
    let suggestions = suggest_zones(name);
    let hint = if suggestions.is_empty() {
        String::new()
    } else {
        format!(" Did you mean: {}?", suggestions.join(", "))
    };
    format!(
        "unknown time zone `{shown}`.{hint} Use an IANA name such as \"Asia/Shanghai\", \
         \"Europe/London\" or \"UTC\"."
    )
}

/// Zone names close to `name`: same name in another case, a city/segment match, names
/// containing it, then small edit distances.
pub fn suggest_zones(name: &str) -> Vec<&'static str> {
    let query = name.trim().to_lowercase().replace(' ', "_");
    if query.is_empty() || query.len() > 64 {
        return Vec::new();
    }
    let tolerance = (query.chars().count() / 4).clamp(1, 3);
    let mut scored: Vec<(usize, &'static str)> = TZ_VARIANTS
        .iter()
        .filter_map(|tz| {
            let full = tz.name();
            let lower = full.to_lowercase();
            let last = lower.rsplit('/').next().unwrap_or(&lower);
            let score = if lower == query {
                0
            } else if last == query {
                1
            } else if query.len() >= 3 && lower.contains(&query) {
                2
            } else {
                let distance = edit_distance(&query, &lower).min(edit_distance(&query, last));
                if distance > tolerance {
                    return None;
                }
                3 + distance
            };
            Some((score, full))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, n)| n)
        .collect()
}

/// Levenshtein distance in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// `calculate_expression`: one arithmetic expression, no state.
struct CalculateExpression;

/// The arguments of `calculate_expression`.
#[derive(Deserialize, JsonSchema)]
struct CalculateExpressionArgs {
    /// The expression to evaluate.
    expression: String,
}

impl Tool for CalculateExpression {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "calculate_expression".into(),
            description: format!(
                "Evaluate a math expression exactly instead of guessing, e.g. \"sin(pi / 2) + \
                 2^8\" or \"sqrt(16) * (3 + 4) % 5\". Operators: + - * / % ^ (power), \
                 comparisons, && ||. Functions: sqrt, cbrt, abs, sin, cos, tan, asin, acos, \
                 atan, atan2(y, x), sinh, cosh, tanh, ln, log (base 10, or log(x, base)), log2, \
                 exp, pow(x, y), hypot(x, y), floor, ceil, round, min, max. Constants: pi, e. \
                 Integer division truncates (7 / 2 = 3); write 7.0 / 2 for 3.5. No variables: \
                 each call stands alone. At most {MAX_EXPRESSION_CHARS} characters."
            ),
            parameters: parameters_of::<CalculateExpressionArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let CalculateExpressionArgs { expression } = parse_args(args)?;
            let expression = expression.trim();
            let (result, text) = calculate(expression)?;
            Ok(fields(json!({
                "expression": expression,
                "result": result,
                "text": text,
            })))
        })
    }
}

/// Evaluates `expression` in a fresh context: (JSON value, display text).
pub fn calculate(expression: &str) -> Result<(Value, String), ToolError> {
    if expression.is_empty() {
        return Err(ToolError::InvalidArguments("`expression` is empty".into()));
    }
    let chars = expression.chars().count();
    if chars > MAX_EXPRESSION_CHARS {
        return Err(ToolError::InvalidArguments(format!(
            "the expression has {chars} characters; the limit is {MAX_EXPRESSION_CHARS}"
        )));
    }
    if nesting(expression) > MAX_NESTING {
        return Err(ToolError::InvalidArguments(format!(
            "the expression nests parentheses more than {MAX_NESTING} deep"
        )));
    }
    let context = math_context().map_err(|e| ToolError::failed(e.to_string()))?;
    // An immutable context: `x = 1` fails instead of leaving state behind.
    let value = evalexpr::eval_with_context(expression, &context).map_err(|e| match e {
        EvalexprError::ContextNotMutable => ToolError::failed(
            "assignments and variables are not supported; write one expression with numbers",
        ),
        EvalexprError::DivisionError { .. } => ToolError::failed(format!(
            "cannot evaluate `{expression}`: division by zero (or an integer overflow)"
        )),
        other => ToolError::failed(format!("cannot evaluate `{expression}`: {other}")),
    })?;
    to_json(&value)
}

/// The deepest parenthesis nesting in `text`.
fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for c in text.chars() {
        match c {
            '(' => {
                depth = depth.saturating_add(1);
                deepest = deepest.max(depth);
            }
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A result as JSON and as text; non-finite numbers are errors.
fn to_json(value: &ExprValue) -> Result<(Value, String), ToolError> {
    match value {
        ExprValue::Float(f) if !f.is_finite() => Err(ToolError::failed(format!(
            "the result is not a finite number ({f}): division by zero, overflow or a value \
             outside the function's domain"
        ))),
        ExprValue::Float(f) => {
            // Whole floats (2^8 = 256.0) read better as integers.
            if f.fract() == 0.0 && f.abs() < 1e15 {
                let whole = *f as i64;
                Ok((json!(whole), whole.to_string()))
            } else {
                Ok((json!(f), f.to_string()))
            }
        }
        ExprValue::Int(i) => Ok((json!(i), i.to_string())),
        ExprValue::Boolean(b) => Ok((json!(b), b.to_string())),
        ExprValue::String(s) => Ok((json!(s), s.clone())),
        ExprValue::Tuple(items) => {
            let mut values = Vec::new();
            let mut texts = Vec::new();
            for item in items {
                let (v, t) = to_json(item)?;
                values.push(v);
                texts.push(t);
            }
            Ok((Value::Array(values), format!("({})", texts.join(", "))))
        }
        ExprValue::Empty => Err(ToolError::failed("the expression has no value")),
    }
}

/// A one-argument float function pointer.
type Unary = fn(f64) -> f64;
/// A two-argument float function pointer.
type Binary = fn(f64, f64) -> f64;

/// A one-argument float function.
fn unary(f: Unary) -> Function<DefaultNumericTypes> {
    Function::new(move |arg: &ExprValue| Ok(ExprValue::Float(f(arg.as_number()?))))
}

/// A two-argument float function.
fn binary(f: Binary) -> Function<DefaultNumericTypes> {
    Function::new(move |arg: &ExprValue| {
        let pair = arg.as_fixed_len_tuple(2)?;
        Ok(ExprValue::Float(f(
            pair[0].as_number()?,
            pair[1].as_number()?,
        )))
    })
}

/// A fresh context with the plain math names (evalexpr's own are `math::sin` etc.).
fn math_context() -> Result<HashMapContext<DefaultNumericTypes>, EvalexprError> {
    let mut context = HashMapContext::<DefaultNumericTypes>::new();
    let unaries: [(&str, Unary); 20] = [
        ("sqrt", f64::sqrt),
        ("cbrt", f64::cbrt),
        ("sin", f64::sin),
        ("cos", f64::cos),
        ("tan", f64::tan),
        ("asin", f64::asin),
        ("acos", f64::acos),
        ("atan", f64::atan),
        ("sinh", f64::sinh),
        ("cosh", f64::cosh),
        ("tanh", f64::tanh),
        ("ln", f64::ln),
        ("log10", f64::log10),
        ("log2", f64::log2),
        ("exp", f64::exp),
        ("floor", f64::floor),
        ("ceil", f64::ceil),
        ("round", f64::round),
        ("trunc", f64::trunc),
        ("signum", f64::signum),
    ];
    for (name, f) in unaries {
        context.set_function(name.into(), unary(f))?;
    }
    let binaries: [(&str, Binary); 3] = [
        ("pow", f64::powf),
        ("atan2", f64::atan2),
        ("hypot", f64::hypot),
    ];
    for (name, f) in binaries {
        context.set_function(name.into(), binary(f))?;
    }
    context.set_function(
        "log".into(),
        Function::new(|arg: &ExprValue| match arg {
            ExprValue::Tuple(_) => {
                let pair = arg.as_fixed_len_tuple(2)?;
                Ok(ExprValue::Float(
                    pair[0].as_number()?.log(pair[1].as_number()?),
                ))
            }
            _ => Ok(ExprValue::Float(arg.as_number()?.log10())),
        }),
    )?;
    context.set_function(
        "abs".into(),
        Function::new(|arg: &ExprValue| match arg {
            ExprValue::Int(i) => i
                .checked_abs()
                .map(ExprValue::Int)
                .ok_or_else(|| EvalexprError::CustomMessage("abs overflows".into())),
            _ => Ok(ExprValue::Float(arg.as_number()?.abs())),
        }),
    )?;
    for (name, value) in [
        ("pi", std::f64::consts::PI),
        ("PI", std::f64::consts::PI),
        ("e", std::f64::consts::E),
        ("tau", std::f64::consts::TAU),
    ] {
        context.set_value(name.into(), ExprValue::Float(value))?;
    }
    Ok(context)
}

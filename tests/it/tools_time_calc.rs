//! `get_current_time` and `calculate_expression` through the registry.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use miniclaw::tools::{Sandbox, ToolContext, builtin_registry};
use serde_json::{Value, json};

async fn call(tool: &str, args: Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(dir.path()).unwrap()));
    builtin_registry()
        .execute(tool, &args.to_string(), &ctx)
        .await
}

async fn calc(expression: &str) -> Value {
    call("calculate_expression", json!({"expression": expression})).await
}

#[tokio::test]
async fn time_in_shanghai_has_offset_weekday_and_iso() {
    let before = Utc::now();
    let result = call("get_current_time", json!({"timezone": "Asia/Shanghai"})).await;
    assert_eq!(result["ok"], json!(true), "{result}");
    assert_eq!(result["timezone"], json!("Asia/Shanghai"));
    assert_eq!(result["utc_offset"], json!("+08:00"));
    let iso = result["iso"].as_str().unwrap();
    assert!(iso.ends_with("+08:00"), "{iso}");
    let parsed = DateTime::parse_from_rfc3339(iso).unwrap();
    let drift = (parsed.with_timezone(&Utc) - before).num_seconds().abs();
    assert!(drift < 60, "{iso}");
    let weekdays = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    let weekday = result["weekday"].as_str().unwrap();
    assert!(weekdays.contains(&weekday), "{weekday}");
    assert_eq!(weekday, parsed.format("%A").to_string());
}

#[tokio::test]
async fn time_defaults_to_utc() {
    for args in [
        json!({}),
        json!({"timezone": null}),
        json!({"timezone": " "}),
    ] {
        let result = call("get_current_time", args).await;
        assert_eq!(result["timezone"], json!("UTC"), "{result}");
        assert_eq!(result["utc_offset"], json!("+00:00"));
        assert!(result["iso"].as_str().unwrap().ends_with('Z'));
    }
}

#[tokio::test]
async fn unknown_zones_suggest_close_names() {
    for (given, expected) in [
        ("Shanghai", "Asia/Shanghai"),
        ("asia/shanghai", "Asia/Shanghai"),
        ("Asia/Shangai", "Asia/Shanghai"),
        ("new york", "America/New_York"),
        ("Europe/Londn", "Europe/London"),
    ] {
        let result = call("get_current_time", json!({"timezone": given})).await;
        assert_eq!(result["ok"], json!(false), "{given}: {result}");
        let error = result["error"].as_str().unwrap();
        assert!(error.contains("unknown time zone"), "{error}");
        assert!(error.contains(expected), "{given}: {error}");
    }
    let nonsense = call("get_current_time", json!({"timezone": "Qqqqqqqqqqqq"})).await;
    let error = nonsense["error"].as_str().unwrap();
    assert!(!error.contains("Did you mean"), "{error}");
    assert!(error.contains("IANA"), "{error}");
}

#[tokio::test]
async fn calculator_evaluates_math() {
    let result = calc("sin(pi / 2) + 2^8").await;
    assert_eq!(result["ok"], json!(true), "{result}");
    assert_eq!(result["result"], json!(257));
    assert_eq!(result["text"], json!("257"));
    assert_eq!(calc("sqrt(16)").await["result"], json!(4));
    assert_eq!(
        calc("abs(-3) + floor(2.7) + ceil(0.2) + round(1.5)").await["result"],
        json!(8)
    );
    assert_eq!(calc("ln(e)").await["result"], json!(1));
    assert_eq!(calc("log(1000)").await["result"], json!(3));
    assert_eq!(calc("log(8, 2)").await["result"], json!(3));
    assert_eq!(calc("exp(0) + cos(0) + tan(0)").await["result"], json!(2));
    assert_eq!(calc("7 / 2").await["result"], json!(3));
    assert_eq!(calc("7.0 / 2").await["result"], json!(3.5));
    assert_eq!(calc("max(1, 9, 4) - min(3, 2)").await["result"], json!(7));
    assert_eq!(calc("2 > 1").await["result"], json!(true));
    let third = calc("1.0 / 3").await;
    assert!((third["result"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
}

#[tokio::test]
async fn calculator_errors_are_reported() {
    for bad in [
        "1 / 0",
        "1.0 / 0",
        "0.0 / 0",
        "sqrt(-1)",
        "10 ^ 1000",
        "2 +* 3",
        "hello",
        "",
        "sin()",
    ] {
        let result = calc(bad).await;
        assert_eq!(result["ok"], json!(false), "{bad:?} gave {result}");
        assert!(!result["error"].as_str().unwrap().is_empty());
    }
    let inf = calc("10 ^ 1000").await;
    assert!(
        inf["error"]
            .as_str()
            .unwrap()
            .contains("not a finite number"),
        "{inf}"
    );
    let long = calc(&"1+".repeat(600)).await;
    assert!(
        long["error"].as_str().unwrap().contains("limit is 1000"),
        "{long}"
    );
    let deep = calc(&format!("{}1{}", "(".repeat(400), ")".repeat(400))).await;
    assert_eq!(deep["ok"], json!(false), "{deep}");
    let nested_ok = calc(&format!("{}1{}", "(".repeat(30), ")".repeat(30))).await;
    assert_eq!(nested_ok["result"], json!(1));
}

#[tokio::test]
async fn calculator_keeps_no_state_between_calls() {
    let assign = calc("x = 5").await;
    assert_eq!(assign["ok"], json!(false), "{assign}");
    assert!(
        assign["error"].as_str().unwrap().contains("not supported"),
        "{assign}"
    );
    let chained = calc("y = 2; y * 3").await;
    assert_eq!(chained["ok"], json!(false), "{chained}");
    let later = calc("x + 1").await;
    assert_eq!(later["ok"], json!(false), "{later}");
    // Constants cannot be overwritten either.
    assert_eq!(calc("pi = 3").await["ok"], json!(false));
    let pi = calc("pi").await["result"].as_f64().unwrap();
    assert!((pi - std::f64::consts::PI).abs() < 1e-12);
}

//! Agent code: build typed params, send them as JSON, parse a model's call back.
#![deny(warnings)]

use serde_json::json;

toolbind::tools!("../fixtures/agent");

fn main() {
    let p = web_search::Params {
        query: "rust trybuild".to_owned(),
        limit: Some(5.0),
        mode: web_search::Mode::Deep,
    };
    let wire = serde_json::to_value(&p).unwrap();
    assert_eq!(
        wire,
        json!({"query": "rust trybuild", "limit": 5, "mode": "deep"})
    );
    let back: web_search::Params = serde_json::from_value(wire.clone()).unwrap();
    assert_eq!(back, p);

    let call = ToolCall::from_call("web_search", wire.clone()).unwrap();
    assert_eq!(call, ToolCall::WebSearch(p));
    assert_eq!(call.name(), "web_search");
    assert_eq!(call.to_args(), wire);

    // What a model may leave out: optional fields and fields with a default.
    let ToolCall::WebSearch(minimal) =
        ToolCall::from_call("web_search", json!({"query": "q"})).unwrap()
    else {
        panic!("parsed into the wrong tool");
    };
    assert_eq!(minimal.limit, None);
    assert_eq!(minimal.mode, web_search::Mode::Fast);

    // A tool without inputs takes no arguments, sent as `null` or `""` by some models.
    assert_eq!(
        ToolCall::from_call("clock", json!(null)).unwrap().name(),
        "clock"
    );
    assert!(ToolCall::from_call("web_search", json!({"query": "q", "extra": 1})).is_err());
    assert!(ToolCall::from_call("nope", json!({})).is_err());
}

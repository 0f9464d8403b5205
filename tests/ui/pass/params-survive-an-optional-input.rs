//! A caller that builds `Params` the documented way (`new` with the required inputs, a
//! `with_` setter per optional one it sets, `Default` for an object whose fields are all
//! optional) compiles, unchanged, against a TOOL.md and against the same TOOL.md with
//! optional and defaulted inputs added, at the top and in a nested object.
#![deny(warnings)]

macro_rules! caller {
    () => {
        pub fn params() -> search::Params {
            search::Params::new("rust".to_owned())
                .with_limit(5)
                .with_filter(search::Filter::default().with_tag("lang".to_owned()))
        }
        pub fn bare() -> search::Params {
            search::Params::new("rust".to_owned())
        }
        pub fn filter() -> search::Filter {
            search::Filter::default()
        }
    };
}

mod before {
    toolbind::tools!("../fixtures/params-before");
    caller!();
}

mod after {
    toolbind::tools!("../fixtures/params-optional-added");
    caller!();
}

fn main() {
    let old = before::params();
    assert_eq!(old.query, "rust");
    assert_eq!(old.limit, Some(5));
    assert_eq!(old.mode, before::search::Mode::Fast);
    assert_eq!(old.filter.unwrap().tag.as_deref(), Some("lang"));

    // The added inputs take their TOOL.md defaults, or are left out.
    let new = after::params();
    assert_eq!(new.lang, None);
    assert!(new.highlight);
    assert!(!new.filter.as_ref().unwrap().archived);
    let wire = serde_json::to_value(&new).unwrap();
    assert_eq!(
        wire,
        serde_json::json!({
            "query": "rust", "limit": 5, "mode": "fast",
            "filter": {"tag": "lang", "archived": false}, "highlight": true
        })
    );

    // `new` equals what a model's call with only the required inputs parses to: the
    // TOOL.md defaults, nothing invented.
    let parsed: after::search::Params =
        serde_json::from_value(serde_json::json!({"query": "rust"})).unwrap();
    assert_eq!(after::bare(), parsed);
    let parsed: after::search::Filter = serde_json::from_value(serde_json::json!({})).unwrap();
    assert_eq!(after::filter(), parsed);
    assert_eq!(before::filter(), before::search::Filter { tag: None });

    // The setters set what a struct literal would.
    let set = after::search::Params::new("rust".to_owned())
        .with_mode(after::search::Mode::Deep)
        .with_lang("en".to_owned())
        .with_highlight(false);
    assert_eq!(set.mode, after::search::Mode::Deep);
    assert_eq!(set.lang.as_deref(), Some("en"));
    assert!(!set.highlight);
}

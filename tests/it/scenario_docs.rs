//! Every TOML example in docs/scenarios.md is a valid scenario.

use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Buf;

#[test]
fn the_documented_examples_parse() {
    let doc = std::fs::read_to_string("docs/scenarios.md").unwrap();
    let blocks: Vec<&str> = doc
        .split("```toml\n")
        .skip(1)
        .map(|rest| rest.split("```").next().unwrap())
        .collect();
    assert!(blocks.len() >= 2);
    for block in blocks {
        let s = Scenario::parse(block, "docs/scenarios.md").unwrap_or_else(|e| panic!("{e}\n{block}"));
        assert!(!s.title.is_empty());
    }
    // the annotated example says what it sets: check a few of its claims
    let annotated = Scenario::parse(
        doc.split("```toml\n").nth(2).unwrap().split("```").next().unwrap(),
        "doc",
    )
    .unwrap();
    assert_eq!((annotated.shape.h, annotated.init.seed), (2, 42));
    assert_eq!(annotated.values[&Buf::BQkv].len(), 12);
}

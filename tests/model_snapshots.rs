//! The JSON shape of the perfquery and ibqueryerrors models, pinned on two
//! simulated-fabric captures: what the CLI, the web page and the rules see.

use fabricscope::ReadOptions;

fn section_json(path: &str) -> serde_json::Value {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let text = std::fs::read_to_string(full).expect("fixture");
    let doc = fabricscope::read(&text, &ReadOptions::default()).expect("recognised");
    let section = doc.sections.first().expect("one section");
    serde_json::to_value(section).expect("serialisable")
}

#[test]
fn saturated_perfquery_section() {
    insta::assert_json_snapshot!(section_json(
        "tests/fixtures/ibsim/counters/node03_perfquery.txt"
    ));
}

#[test]
fn ibqueryerrors_with_link_info() {
    insta::assert_json_snapshot!(section_json(
        "tests/fixtures/ibsim/counters/ibqueryerrors_r.txt"
    ));
}

#[test]
fn models_read_back_from_their_json() {
    use fabricscope::model::ibqueryerrors::Ibqueryerrors;
    use fabricscope::model::perfquery::Perfquery;
    let perf = section_json("tests/fixtures/ibsim/switch_by_lid/perfquery_x_l.txt");
    let model: Perfquery = serde_json::from_value(perf["data"].clone()).expect("perfquery JSON");
    assert_eq!(serde_json::to_value(&model).expect("json"), perf["data"]);
    let iqe = section_json("tests/fixtures/ibsim/counters/ibqueryerrors_r.txt");
    let model: Ibqueryerrors =
        serde_json::from_value(iqe["data"].clone()).expect("ibqueryerrors JSON");
    assert_eq!(serde_json::to_value(&model).expect("json"), iqe["data"]);
}

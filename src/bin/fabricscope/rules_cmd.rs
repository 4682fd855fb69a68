//! `fabricscope rules` and `fabricscope explain ID`: the rule catalogue.

use fabricscope::rules::registry::{catalogue_json, explain_text};
use fabricscope::rules::{by_id, RULES};
use std::process::ExitCode;

/// Lists every rule: id, severity, name and summary; or the catalogue as JSON.
pub fn list(json: bool) -> Result<ExitCode, String> {
    if json {
        let text = serde_json::to_string_pretty(&catalogue_json()).map_err(|e| e.to_string())?;
        outln!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    for r in RULES {
        outln!(
            "{}  {:<8}  {:<28}  {}",
            r.id,
            r.severity.name(),
            r.name,
            r.summary
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints one rule's documentation.
pub fn explain(id: &str) -> Result<ExitCode, String> {
    let rule = by_id(id)
        .or_else(|| RULES.iter().copied().find(|r| r.name == id.trim()))
        .ok_or_else(|| format!("no rule {id:?}; `fabricscope rules` lists them"))?;
    out!("{}", explain_text(rule));
    Ok(ExitCode::SUCCESS)
}

//! `--expectations-from REPORT.json`: an expectation file (`CONFORMANCE_EXPECT`) written from a
//! report, accepting each of its failures as it is: a start for a library's list of known deviations.

/// An expectation file that accepts every failure of a report as it is (each with the first
/// failed call's observed answer): a start for a library's list of known deviations.
pub fn from_report(path: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let j: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{path} is not a report: {e}"))?;
    let mut out = format!(
        "# Known deviations, from {path} ({}). Give each a real reason.\n",
        j["date"].as_str().unwrap_or("?")
    );
    for t in j["trials"].as_array().ok_or_else(|| format!("{path} has no trials"))? {
        if t["outcome"] != "failed" {
            continue;
        }
        let trial = t["trial"].as_str().unwrap_or("");
        let observed = t["observations"]
            .as_array()
            .and_then(|a| a.iter().find(|o| o["ok"] == false))
            .and_then(|o| o["observed"].as_str())
            .and_then(|o| o.split(" (").next())
            .map(|o| format!("observed = {o:?}\n"))
            .unwrap_or_default();
        let first = t["message"].as_str().unwrap_or("").lines().next().unwrap_or("");
        out.push_str(&format!(
            "\n[[deviation]]\ntrial = {trial:?}\n{observed}reason = {:?}\n",
            format!("TODO: {first}")
        ));
    }
    Ok(out)
}

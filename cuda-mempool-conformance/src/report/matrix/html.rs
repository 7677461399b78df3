//! matrix.html: one page, everything inline (templates/matrix.html), opening with the API × column
//! grid, then the columns, the expected inventory, the per-column tables, the causes and the trials.

use super::markdown::MISSING;
use super::{verdict, Matrix};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// The HTML page's template: inline CSS and JavaScript, no external asset.
const PAGE: &str = include_str!("../../../templates/matrix.html");

/// The outcome as a CSS class name (letters and dashes only).
fn class(outcome: &str) -> String {
    outcome
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

impl Matrix {
    /// The API × column grid: each API's row, a cell a column (its row, its verdict's class).
    fn api_rows(&self) -> Vec<Value> {
        self.api_index()
            .into_iter()
            .map(|(index, api)| {
                let cells: Vec<Value> = self
                    .columns
                    .iter()
                    .map(|c| {
                        if c.missing.is_some() {
                            return json!({"missing": true, "class": MISSING});
                        }
                        match c.apis.iter().find(|a| a.index == index && a.api == api) {
                            Some(a) => json!({"row": a, "class": verdict::class(&a.test_passed)}),
                            None => json!({"class": "absent"}),
                        }
                    })
                    .collect();
                json!({"index": index, "api": api, "cells": cells})
            })
            .collect()
    }

    /// The trials' grid: a row a trial, a cell a column.
    fn trial_rows(&self) -> Vec<Value> {
        self.trials
            .iter()
            .map(|t| {
                let cells: Vec<Value> = self
                    .columns
                    .iter()
                    .map(|c| match (&c.missing, c.trials.get(t)) {
                        (Some(entry), _) => json!({"outcome": MISSING, "class": MISSING,
                            "message": format!("{entry}: expected, no readable report")}),
                        (None, Some(x)) => {
                            json!({"outcome": x.outcome, "class": class(&x.outcome), "message": x.message})
                        }
                        (None, None) => json!({"outcome": "absent", "class": "absent", "message": ""}),
                    })
                    .collect();
                json!({"trial": t, "cells": cells})
            })
            .collect()
    }

    /// matrix.html.
    pub fn html(&self) -> Result<String, String> {
        let mut env = minijinja::Environment::new();
        env.add_template("matrix.html", PAGE)
            .map_err(|e| format!("matrix template: {e}"))?;
        let outcomes: BTreeSet<&String> = self.columns.iter().flat_map(|c| c.totals.keys()).collect();
        let legend: Vec<Value> = outcomes
            .into_iter()
            .map(|o| json!({"outcome": o, "class": class(o)}))
            .collect();
        let settings: Vec<String> = self.columns.iter().map(|c| c.origin.settings_text()).collect();
        let tmpl = env
            .get_template("matrix.html")
            .map_err(|e| format!("matrix template: {e}"))?;
        tmpl.render(minijinja::context! {
            columns => self.columns, apis => self.api_rows(), rows => self.trial_rows(), legend => legend,
            settings => settings, expected => self.expected, unreadable => self.unreadable,
            missing => self.missing(),
        })
        .map_err(|e| format!("matrix page: {e}"))
    }
}

//! Reads a model's extraction answers again through the checks memory_extract applies
//! (`extract::parse_answer`) and prints every entry left out, with why: how `make eval-extract`
//! says what its dropped entries were (bench/qa/eval_extract.py, docs/retrieval.md "Extraction
//! with a real model").
//!   cargo run --release -p memory_core --example extract_check -- FILE
//! FILE has one JSON object a line, `{"input": <the call's user message>, "answer": <the
//! model's text>}`: the user message is the JSON `extract::llm_input` writes (the batch's turns,
//! the known memories shown, whether insights were asked), so the batch is read back from it.
//! Prints one JSON object a line: `{"call", "reason", "text"}` for each entry left out, with
//! `--kept` also `{"call", "kept", "turn", "speaker", "text"}` for each one kept (the speaker
//! of the turn it is attached to), then the count by reason.
use memory_core::extract::{self, Turn};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show_kept = args.iter().any(|a| a == "--kept");
    let path = args.iter().find(|a| !a.starts_with("--")).expect("FILE");
    let raw = std::fs::read_to_string(path).expect("readable file");
    let mut by_reason: BTreeMap<&str, usize> = BTreeMap::new();
    let mut kept = 0;
    for (call, line) in raw.lines().enumerate() {
        let Ok(rec) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(input) = rec["input"]
            .as_str()
            .and_then(|i| serde_json::from_str::<Value>(i).ok())
        else {
            continue;
        };
        let turns: Vec<Turn> = input["turns"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| Turn {
                seq: t["turn"].as_i64().unwrap_or(0),
                role: t["role"].as_str().unwrap_or("user").to_string(),
                name: t["speaker"].as_str().map(str::to_string),
                text: t["text"].as_str().unwrap_or("").to_string(),
            })
            .collect();
        let known: Vec<&str> = input["known"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|k| k["text"].as_str())
            .collect();
        let insights = input["insights"].as_bool().unwrap_or(false);
        let answer = rec["answer"].as_str().unwrap_or("");
        match extract::parse_answer(answer, &turns, &known, insights) {
            Ok(p) => {
                kept += p.candidates.len();
                if show_kept {
                    for c in &p.candidates {
                        let speaker = turns
                            .iter()
                            .find(|t| t.seq == c.seq)
                            .and_then(|t| t.name.clone());
                        println!(
                            "{}",
                            json!({"call": call, "kept": format!("{:?}", c.kind), "turn": c.seq,
                                   "speaker": speaker, "text": c.text})
                        );
                    }
                }
                for d in p.dropped {
                    *by_reason.entry(d.reason).or_default() += 1;
                    println!(
                        "{}",
                        json!({"call": call, "reason": d.reason, "text": d.text})
                    );
                }
            }
            Err(e) => {
                *by_reason.entry("unusable answer").or_default() += 1;
                println!(
                    "{}",
                    json!({"call": call, "reason": "unusable answer", "text": e})
                );
            }
        }
    }
    println!("{}", json!({"kept": kept, "dropped": by_reason}));
}

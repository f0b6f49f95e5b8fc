//! Screening on its labelled set (tests/data/screen_cases.tsv, written by
//! scripts/screen_cases.py): every positive found by its detector, no hard negative flagged.
//! The goals (docs/api.md "Screening"): secrets recall at least 0.98; no false positive on the
//! hard negatives. Misses and false positives are printed, so a failure says which.

use memory_core::screen::{self, Family};

fn cases() -> Vec<(String, String)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/screen_cases.tsv"
    );
    std::fs::read_to_string(path)
        .expect("tests/data/screen_cases.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (det, text) = l.split_once('\t').expect("detector<TAB>text");
            (
                det.to_string(),
                text.replace("\\n", "\n").replace("\\\\", "\\"),
            )
        })
        .collect()
}

#[test]
fn labelled_set() {
    let cases = cases();
    let (mut secrets, mut secrets_found) = (0, 0);
    let (mut others, mut others_found) = (0, 0);
    let (mut negatives, mut false_positives) = (0, 0);
    let mut report = vec![];
    for (det, text) in &cases {
        let found = screen::scan(text);
        let names: Vec<&str> = found.iter().map(|f| f.detector).collect();
        if det == "none" {
            negatives += 1;
            if !found.is_empty() {
                false_positives += 1;
                report.push(format!("false positive {names:?}: {text}"));
            }
            continue;
        }
        let hit = names.contains(&det.as_str());
        let secret = screen::family_of(det) == Some(Family::Secret);
        if secret {
            secrets += 1;
            secrets_found += hit as usize;
        } else {
            others += 1;
            others_found += hit as usize;
        }
        if !hit {
            report.push(format!("missed {det} (found {names:?}): {text}"));
        }
    }
    let recall = secrets_found as f64 / secrets as f64;
    println!(
        "secrets {secrets_found}/{secrets} (recall {recall:.3}); other detectors {others_found}/{others}; \
         false positives {false_positives}/{negatives}"
    );
    for r in &report {
        println!("  {r}");
    }
    assert!(secrets >= 100 && negatives >= 200, "the set is too small");
    assert!(recall >= 0.98, "secrets recall {recall:.3} < 0.98");
    assert_eq!(
        others_found, others,
        "cards, IBANs, national ids, emails and phones must all be found"
    );
    assert_eq!(false_positives, 0, "hard negatives flagged");
}

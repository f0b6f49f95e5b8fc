//! Screens every line of a file (one text per line) and prints each finding: how make eval
//! measures screening's false positives on a conversation corpus (bench/src/eval).
//!   cargo run -p memory_core --example screen_file -- texts.txt
fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("a file of texts, one per line");
    let text = std::fs::read_to_string(path).expect("readable file");
    let (mut n, mut hits) = (0, 0);
    for line in text.lines() {
        n += 1;
        let found = memory_core::screen::scan(line);
        if !found.is_empty() {
            hits += 1;
            let names: Vec<&str> = found.iter().map(|f| f.detector).collect();
            println!("{names:?}\t{line}");
        }
    }
    eprintln!("{hits} of {n} texts flagged");
}

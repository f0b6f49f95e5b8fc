//! `memory_ext_standin [PORT]`: runs the stand-in in the foreground (for client tests and
//! benchmarks that need an endpoint the Postgres server can reach).
fn main() {
    let port = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let s = memory_ext_standin::StandIn::start(port);
    println!("stand-in listening on {}", s.base());
    loop {
        std::thread::park();
    }
}

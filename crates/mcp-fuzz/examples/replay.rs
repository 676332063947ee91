//! Runs one input through one target on stable, to see its panic with a debugger or prints:
//! `cargo run -p mcp-fuzz --example replay -- <target> <file>...`.

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().expect("usage: replay <target> <file>...");
    let target = mcp_fuzz::target(&name).unwrap_or_else(|| panic!("no target {name}"));
    for file in args {
        let data = std::fs::read(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
        println!("{file}: {} bytes", data.len());
        target(&data);
        println!("{file}: passes");
    }
}

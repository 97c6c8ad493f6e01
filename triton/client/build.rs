//! Compiles `proto/kserve_v2.proto` into the gRPC client without a system `protoc`: protox
//! parses it in Rust into a descriptor set, and tonic-prost-build writes the messages and the
//! client (no server: Banter only calls Triton).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/kserve_v2.proto";
    println!("cargo:rerun-if-changed={proto}");
    let fds = protox::compile([proto], ["proto"])?;
    tonic_prost_build::configure()
        .build_server(false)
        .build_client(true)
        .compile_fds(fds)?;
    Ok(())
}

//! Any bytes as a TOOL.md: parse, validate, every emitter (see `toolbind_tests::fuzzing`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolbind_tests::fuzzing::front_end(data);
});

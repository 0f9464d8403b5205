//! Any bytes as a model's arguments, for every representative tool: runtime validation vs
//! the JSON Schema vs the generated typed path (see `toolbind_tests::fuzzing`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolbind_tests::fuzzing::arguments(data);
});

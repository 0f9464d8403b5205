//! `toolbind sync`: sync-by-version of seed tools into a data folder.

use crate::args::SyncArgs;
use crate::exit::{Code, Failure, Outcome};

pub fn run(args: &SyncArgs) -> Outcome {
    let report =
        toolbind::sync(&args.seed, &args.data).map_err(|e| Failure::failed(e.to_string()))?;
    println!("{report}");
    Ok(Code::Ok)
}

//! `toolbind sync`: sync-by-version of seed tools into a data folder.

use crate::args::SyncArgs;
use crate::exit::{Code, Failure, Outcome};

pub fn run(args: &SyncArgs) -> Outcome {
    let report =
        toolbind::sync(&args.seed, &args.data).map_err(|e| Failure::failed(e.to_string()))?;
    println!("{report}");
    // The report still says what did install; the exit status says not everything did.
    let failed = report.counts().failed;
    if failed > 0 {
        eprintln!("error: {failed} tool(s) failed to install or update; see `failed` above");
        return Ok(Code::Failed);
    }
    Ok(Code::Ok)
}

//! The one sweeper of `serve`'s stores: once a second the tasks past their TTL are stopped
//! (and finished ones dropped), and the MCP 2026-07-28 calls whose client has not come
//! back within `--pending-ttl` are stopped, even when no request comes.

use std::sync::Weak;
use std::time::Duration;

/// A store whose entries outlive their TTL: [`Expire::expire`] stops or drops them.
pub(crate) trait Expire: Send + Sync {
    /// Stops or drops what has outlived its TTL.
    fn expire(&self);
}

/// How often the stores are swept.
const EVERY: Duration = Duration::from_secs(1);

/// Sweeps `stores` every second (the first time at once) until every one of them is
/// gone. Outside a tokio runtime there is nothing to run it on: the stores are then swept
/// only as requests come.
pub(crate) fn start(stores: Vec<Weak<dyn Expire>>) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    handle.spawn(async move {
        let mut tick = tokio::time::interval(EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let live: Vec<_> = stores.iter().filter_map(Weak::upgrade).collect();
            if live.is_empty() {
                return;
            }
            for store in live {
                store.expire();
            }
        }
    });
}

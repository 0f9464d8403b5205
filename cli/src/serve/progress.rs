//! A tool's progress updates as MCP `notifications/progress` values, which must increase.

use toolbind::Progress;

/// The position of one call's progress notifications.
#[derive(Debug, Default)]
pub struct Position {
    /// The last value sent.
    last: Option<f64>,
    /// The tool has reported a position of its own.
    positioned: bool,
}

impl Position {
    /// The `(progress, total, message)` to send for `p`, or `None` to drop it.
    ///
    /// An update with a position sends it (and its total) when it is above the last value
    /// sent; one that goes backwards or stands still is dropped. Until a tool reports a
    /// position, each text-only update counts one up (1, 2, 3, ...); once it has, text-only
    /// updates are dropped, since no increasing value is left to give them.
    pub fn next(&mut self, p: &Progress) -> Option<(f64, Option<f64>, String)> {
        let value = match p.progress {
            Some(v) if self.last.is_none_or(|l| v > l) => {
                self.positioned = true;
                v
            }
            Some(_) => return None,
            None if self.positioned => return None,
            None => self.last.unwrap_or(0.0) + 1.0,
        };
        self.last = Some(value);
        Some((value, p.total, p.text_content()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(progress: f64, total: f64) -> Progress {
        Progress::text(format!("{progress}/{total}")).at(progress, Some(total))
    }

    #[test]
    fn values_only_increase() {
        let mut pos = Position::default();
        assert_eq!(pos.next(&Progress::text("start")).unwrap().0, 1.0);
        assert_eq!(pos.next(&Progress::text("more")).unwrap().0, 2.0);
        assert_eq!(pos.next(&at(1.5, 100.0)), None, "below the counter");
        assert_eq!(
            pos.next(&at(40.0, 100.0)),
            Some((40.0, Some(100.0), "40/100".into()))
        );
        assert_eq!(pos.next(&at(40.0, 100.0)), None, "standing still");
        assert_eq!(pos.next(&at(30.0, 100.0)), None, "backwards");
        assert_eq!(pos.next(&Progress::text("no position")), None);
        assert_eq!(pos.next(&at(100.0, 100.0)).unwrap().0, 100.0);
    }
}

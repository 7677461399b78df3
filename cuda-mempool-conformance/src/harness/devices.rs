//! Which devices the suite uses (`CONFORMANCE_DEVICES`), and how its cases spread over them.
//!
//! - default: single-device cases on device 0, pair cases on the first pair that device 0 shares
//!   peer access with, multi-device cases on every device that can reach device 0 and each other;
//! - `all`: every device; `LIST` (`0,2,3`): those devices. Single-device cases then run once per
//!   device (names end in `::devN`), pair cases on every ordered peer-capable pair (`::devA_devB`),
//!   multi-device cases on the largest set of the devices that all reach each other.

use crate::harness::machine::Machine;
use conformance_model::{Extra, Selection};
// What CONFORMANCE_DEVICES asks for is the setting's type; `select` takes it.
pub use crate::harness::settings::Request;
use crate::harness::settings::DEVICES_VAR;

fn mutual(m: &Machine, a: i32, b: i32) -> bool {
    let (a, b) = (a as usize, b as usize);
    a != b
        && m.peer.get(a).and_then(|r| r.get(b)).copied().unwrap_or(false)
        && m.peer.get(b).and_then(|r| r.get(a)).copied().unwrap_or(false)
}

/// The largest group found greedily, in index order, of `from` that all reach each other.
fn clique(m: &Machine, from: &[i32]) -> Vec<i32> {
    let mut best: Vec<i32> = from.iter().take(1).copied().collect();
    for &start in from {
        let mut g = vec![start];
        for &d in from {
            if d != start && g.iter().all(|&x| mutual(m, x, d)) {
                g.push(d);
            }
        }
        if g.len() > best.len() {
            best = g;
        }
    }
    best.sort_unstable();
    best
}

/// Resolve a request against the machine; errors name what is wrong and what to do.
pub fn select(req: &Request, m: &Machine, peer_required: bool) -> Result<Selection, String> {
    let n = m.devices.len() as i32;
    let all: Vec<i32> = (0..n).collect();
    let s = match req {
        Request::Default => {
            let devices: Vec<i32> = all.iter().take(1).copied().collect();
            let pairs: Vec<(i32, i32)> = (1..n).find(|&j| mutual(m, 0, j)).map(|j| (0, j)).into_iter().collect();
            let with_0: Vec<i32> = all.iter().copied().filter(|&d| d == 0 || mutual(m, 0, d)).collect();
            Selection {
                explicit: false,
                devices,
                pairs,
                multi: clique(m, &with_0),
                extra: Extra::new(),
            }
        }
        Request::All | Request::List(_) => {
            let devices = match req {
                Request::List(l) => {
                    if let Some(bad) = l.iter().find(|&&d| d >= n) {
                        return Err(if n == 0 {
                            format!("{DEVICES_VAR}: there is no device {bad}: this machine shows no CUDA device")
                        } else {
                            format!(
                                "{DEVICES_VAR}: there is no device {bad}: this machine has {n} device(s) (0 to {})",
                                n - 1
                            )
                        });
                    }
                    l.clone()
                }
                _ => all.clone(),
            };
            let pairs: Vec<(i32, i32)> = devices
                .iter()
                .flat_map(|&a| devices.iter().map(move |&b| (a, b)))
                .filter(|&(a, b)| mutual(m, a, b))
                .collect();
            if pairs.is_empty() && peer_required && devices.len() > 1 {
                return Err(format!(
                    "{DEVICES_VAR}: no two of devices {devices:?} can access each other, and CONFORMANCE_REQUIRE \
                     includes `peer`; list devices that share peer access, or drop `peer`"
                ));
            }
            if pairs.is_empty() && peer_required && devices.len() == 1 {
                return Err(format!(
                    "{DEVICES_VAR}: one device ({}) cannot make a pair, and CONFORMANCE_REQUIRE includes `peer`; \
                     list two or more devices, or drop `peer`",
                    devices[0]
                ));
            }
            Selection {
                explicit: true,
                multi: clique(m, &devices),
                devices,
                pairs,
                extra: Extra::new(),
            }
        }
    };
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(n: usize, peer: &[(usize, usize)]) -> Machine {
        let mut m = Machine::from(conformance_model::Machine {
            devices: (0..n)
                .map(|i| crate::harness::machine::blank_device(i as i32))
                .collect(),
            peer: vec![vec![false; n]; n],
            ..crate::harness::machine::blank()
        });
        for &(a, b) in peer {
            m.peer[a][b] = true;
            m.peer[b][a] = true;
        }
        m
    }

    #[test]
    fn default_is_device_0_and_its_first_pair() {
        let m = machine(4, &[(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]);
        let s = select(&Request::Default, &m, false).unwrap();
        assert_eq!(
            (s.devices.clone(), s.pairs.clone(), s.multi.clone()),
            (vec![0], vec![(0, 1)], vec![0, 1, 2, 3])
        );
        assert!(!s.explicit);
        assert_eq!(crate::harness::machine::used(&s), vec![0, 1, 2, 3]);
    }

    #[test]
    fn all_gives_every_ordered_pair() {
        let m = machine(3, &[(0, 1), (1, 2)]);
        let s = select(&Request::All, &m, false).unwrap();
        assert_eq!(s.pairs, vec![(0, 1), (1, 0), (1, 2), (2, 1)]);
        assert_eq!(s.multi.len(), 2, "0 and 2 cannot reach each other: no group of three");
    }

    #[test]
    fn bad_requests_are_clear_errors() {
        let m = machine(2, &[]);
        assert!(select(&Request::List(vec![2]), &m, false)
            .unwrap_err()
            .contains("no device 2"));
        assert!(select(&Request::List(vec![0, 1]), &m, true)
            .unwrap_err()
            .contains("peer"));
        assert!(select(&Request::List(vec![0, 1]), &m, false).is_ok());
    }
}

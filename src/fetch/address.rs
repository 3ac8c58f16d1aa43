//! Which IP addresses a public server may have: the SSRF guard's classifier.
//!
//! [`is_global`] follows the IANA IPv4 Special-Purpose Address Registry and the IANA IPv6
//! Special-Purpose Address Registry (RFC 6890): an address is global unless the most specific
//! registry entry holding it says "Globally Reachable: False" or "N/A" (a terminated entry, whose
//! flags are empty, counts as N/A). On top of the registries, IPv4 multicast is refused, and IPv6
//! is refused outside 2000::/3, the global unicast space (RFC 4291 §2.4), with one exception:
//! the NAT64 well-known prefix 64:ff9b::/96 is global exactly when the IPv4 address it embeds is.
//!
//! The two tables below are the registries, one line per entry. The tests read a copy of each
//! registry (`fixtures/iana/`) and check the tables and the classifier against it entry by entry.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// IPv4: (block, prefix length, globally reachable). An address in none of them is global.
#[rustfmt::skip]
const V4: &[(Ipv4Addr, u8, bool)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8, false),          // "This network", RFC 791
    (Ipv4Addr::new(0, 0, 0, 0), 32, false),         // "This host on this network", RFC 1122
    (Ipv4Addr::new(10, 0, 0, 0), 8, false),         // Private-Use, RFC 1918
    (Ipv4Addr::new(100, 64, 0, 0), 10, false),      // Shared Address Space, RFC 6598
    (Ipv4Addr::new(127, 0, 0, 0), 8, false),        // Loopback, RFC 1122
    (Ipv4Addr::new(169, 254, 0, 0), 16, false),     // Link Local, RFC 3927
    (Ipv4Addr::new(172, 16, 0, 0), 12, false),      // Private-Use, RFC 1918
    (Ipv4Addr::new(192, 0, 0, 0), 24, false),       // IETF Protocol Assignments, RFC 6890
    (Ipv4Addr::new(192, 0, 0, 0), 29, false),       // IPv4 Service Continuity Prefix, RFC 7335
    (Ipv4Addr::new(192, 0, 0, 8), 32, false),       // IPv4 dummy address, RFC 7600
    (Ipv4Addr::new(192, 0, 0, 9), 32, true),        // Port Control Protocol Anycast, RFC 7723
    (Ipv4Addr::new(192, 0, 0, 10), 32, true),       // TURN Anycast, RFC 8155
    (Ipv4Addr::new(192, 0, 0, 170), 32, false),     // NAT64/DNS64 Discovery, RFC 8880
    (Ipv4Addr::new(192, 0, 0, 171), 32, false),     // NAT64/DNS64 Discovery, RFC 8880
    (Ipv4Addr::new(192, 0, 2, 0), 24, false),       // Documentation (TEST-NET-1), RFC 5737
    (Ipv4Addr::new(192, 31, 196, 0), 24, true),     // AS112-v4, RFC 7535
    (Ipv4Addr::new(192, 52, 193, 0), 24, true),     // AMT, RFC 7450
    (Ipv4Addr::new(192, 88, 99, 0), 24, false),     // Deprecated (6to4 Relay Anycast), RFC 7526: N/A
    (Ipv4Addr::new(192, 88, 99, 2), 32, false),     // 6a44-relay anycast address, RFC 6751
    (Ipv4Addr::new(192, 168, 0, 0), 16, false),     // Private-Use, RFC 1918
    (Ipv4Addr::new(192, 175, 48, 0), 24, true),     // Direct Delegation AS112 Service, RFC 7534
    (Ipv4Addr::new(198, 18, 0, 0), 15, false),      // Benchmarking, RFC 2544
    (Ipv4Addr::new(198, 51, 100, 0), 24, false),    // Documentation (TEST-NET-2), RFC 5737
    (Ipv4Addr::new(203, 0, 113, 0), 24, false),     // Documentation (TEST-NET-3), RFC 5737
    (Ipv4Addr::new(224, 0, 0, 0), 4, false),        // not in the registry: multicast, RFC 5771
    (Ipv4Addr::new(240, 0, 0, 0), 4, false),        // Reserved, RFC 1112
    (Ipv4Addr::new(255, 255, 255, 255), 32, false), // Limited Broadcast, RFC 919
];

/// IPv6: (block, prefix length, globally reachable). An address in none of them is not global.
#[rustfmt::skip]
const V6: &[(Ipv6Addr, u8, bool)] = &[
    (Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3, true),          // not in the registry: global unicast, RFC 4291
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 1), 128, false),            // Loopback Address, RFC 4291
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 128, false),            // Unspecified Address, RFC 4291
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0), 96, false),        // IPv4-mapped Address, RFC 4291
    (Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96, true),      // IPv4-IPv6 Translat., RFC 6052 (see NAT64)
    (Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48, false),     // IPv4-IPv6 Translat., RFC 8215
    (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64, false),         // Discard-Only Address Block, RFC 6666
    (Ipv6Addr::new(0x100, 0, 0, 1, 0, 0, 0, 0), 64, false),         // Dummy IPv6 Prefix, RFC 9780
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23, false),        // IETF Protocol Assignments, RFC 2928
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32, false),        // TEREDO, RFC 4380: N/A
    (Ipv6Addr::new(0x2001, 1, 0, 0, 0, 0, 0, 1), 128, true),        // Port Control Protocol Anycast, RFC 7723
    (Ipv6Addr::new(0x2001, 1, 0, 0, 0, 0, 0, 2), 128, true),        // TURN Anycast, RFC 8155
    (Ipv6Addr::new(0x2001, 1, 0, 0, 0, 0, 0, 3), 128, true),        // DNS-SD SRP Anycast, RFC 9665
    (Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 0), 48, false),        // Benchmarking, RFC 5180
    (Ipv6Addr::new(0x2001, 3, 0, 0, 0, 0, 0, 0), 32, true),         // AMT, RFC 7450
    (Ipv6Addr::new(0x2001, 4, 0x112, 0, 0, 0, 0, 0), 48, true),     // AS112-v6, RFC 7535
    (Ipv6Addr::new(0x2001, 0x10, 0, 0, 0, 0, 0, 0), 28, false),     // Deprecated (previously ORCHID), RFC 4843: N/A
    (Ipv6Addr::new(0x2001, 0x20, 0, 0, 0, 0, 0, 0), 28, true),      // ORCHIDv2, RFC 7343
    (Ipv6Addr::new(0x2001, 0x30, 0, 0, 0, 0, 0, 0), 28, true),      // Drone Remote ID DETs Prefix, RFC 9374
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32, false),    // Documentation, RFC 3849
    (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16, false),        // 6to4, RFC 3056: N/A
    (Ipv6Addr::new(0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0), 48, true), // Direct Delegation AS112 Service, RFC 7534
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20, false),        // Documentation, RFC 9637
    (Ipv6Addr::new(0x5f00, 0, 0, 0, 0, 0, 0, 0), 16, false),        // Segment Routing (SRv6) SIDs, RFC 9602
    (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7, false),         // Unique-Local, RFC 4193
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, false),        // Link-Local Unicast, RFC 4291
];

/// NAT64's well-known prefix (RFC 6052): global only as far as the IPv4 address behind it is.
const NAT64: Ipv6Addr = Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0);

/// True only for an address a public server may have; see the module's documentation.
///
/// An IPv4-mapped address (`::ffff:a.b.c.d`) is refused like every address outside 2000::/3; a
/// caller that means the IPv4 address should pass [`IpAddr::to_canonical`].
pub fn is_global(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_global_v4(v4),
        IpAddr::V6(v6) if within(v6.to_bits(), NAT64.to_bits(), 96, 128) => {
            is_global_v4(Ipv4Addr::from_bits(v6.to_bits() as u32))
        }
        IpAddr::V6(v6) => most_specific(
            V6.iter().map(|&(p, l, g)| (p.to_bits(), l, g)),
            v6.to_bits(),
            128,
        )
        .unwrap_or(false),
    }
}

/// IPv4 has no outer space to stay inside: what no table entry refuses is global.
fn is_global_v4(v4: Ipv4Addr) -> bool {
    let bits = u128::from(v4.to_bits());
    most_specific(
        V4.iter().map(|&(p, l, g)| (u128::from(p.to_bits()), l, g)),
        bits,
        32,
    )
    .unwrap_or(true)
}

/// The verdict of the longest block holding `addr` (the registries nest: a more specific entry
/// overrides the block around it, e.g. 192.0.0.9/32 inside 192.0.0.0/24).
fn most_specific(
    table: impl Iterator<Item = (u128, u8, bool)>,
    addr: u128,
    width: u8,
) -> Option<bool> {
    table
        .filter(|&(prefix, len, _)| within(addr, prefix, len, width))
        .max_by_key(|&(_, len, _)| len)
        .map(|(_, _, global)| global)
}

/// Whether `addr` lies in `prefix/len`, both `width` bits wide (32 or 128) in the low bits.
fn within(addr: u128, prefix: u128, len: u8, width: u8) -> bool {
    let host_bits = u32::from(width - len.min(width));
    let mask = u128::MAX.checked_shl(host_bits).unwrap_or(0);
    (addr & mask) == (prefix & mask)
}

/// Every address that is not globally reachable ([`is_global`]: the
/// IANA special-purpose registries, embedded IPv4 forms included): never a publisher's
/// public server (SSRF guard).
pub fn is_private(ip: IpAddr) -> bool {
    !is_global(ip)
}

/// The IPv4 address carried by an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`, deprecated; not `::` or `::1`), NAT64 (64:ff9b::/96, and 64:ff9b:1::/48 in
/// RFC 6052's /48 layout) or 6to4 (2002:aabb:ccdd::/48) address. For the tests only:
/// [`is_global`] decides on the IPv6 address itself.
#[cfg(test)]
fn embedded_ipv4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let o = v6.octets();
    let low32 = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    match v6.segments() {
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(low32),
        [0, 0, 0, 0, 0, 0, hi, lo] if hi != 0 || lo > 1 => Some(low32),
        // RFC 6052 §2.2, /48: bits 48..64 hold two octets, 64..72 are the zero "u" octet.
        [0x64, 0xff9b, 1, ..] => Some(Ipv4Addr::new(o[6], o[7], o[9], o[10])),
        [0x2002, ..] => Some(Ipv4Addr::new(o[2], o[3], o[4], o[5])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V4_CSV: &str = include_str!("../../fixtures/iana/iana-ipv4-special-registry.csv");
    const V6_CSV: &str = include_str!("../../fixtures/iana/iana-ipv6-special-registry.csv");

    /// Rows of an RFC 4180 CSV: quoted cells may hold commas, line breaks and doubled quotes.
    fn csv(text: &str) -> Vec<Vec<String>> {
        let (mut rows, mut row, mut cell) = (Vec::new(), Vec::new(), String::new());
        let (mut quoted, mut chars) = (false, text.chars().peekable());
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    cell.push('"');
                    chars.next();
                }
                ('"', _) => quoted = !quoted,
                (',', false) => row.push(std::mem::take(&mut cell)),
                ('\r', false) => {}
                ('\n', false) => {
                    row.push(std::mem::take(&mut cell));
                    rows.push(std::mem::take(&mut row));
                }
                _ => cell.push(c),
            }
        }
        if !cell.is_empty() || !row.is_empty() {
            row.push(cell);
            rows.push(row);
        }
        rows
    }

    /// A cell without its footnote marks (`192.0.0.0/24 [2]`, `False [1]`).
    fn unfootnoted(cell: &str) -> String {
        let mut out = String::new();
        let mut rest = cell;
        while let Some(open) = rest.find('[') {
            out.push_str(&rest[..open]);
            rest = rest[open..]
                .find(']')
                .map_or("", |close| &rest[open + close + 1..]);
        }
        out.push_str(rest);
        out.trim().to_owned()
    }

    /// A registry's blocks as (first address, prefix length, globally reachable, name); a row
    /// may list several blocks, and anything but "True" (False, N/A, empty) is not reachable.
    fn registry(text: &str) -> Vec<(IpAddr, u8, bool, String)> {
        let rows = csv(text);
        assert_eq!(rows[0][0], "Address Block");
        assert_eq!(rows[0][8], "Globally Reachable");
        let mut blocks = Vec::new();
        for row in &rows[1..] {
            let global = unfootnoted(&row[8]) == "True";
            for block in unfootnoted(&row[0]).split(',') {
                let (addr, len) = block.trim().split_once('/').unwrap();
                blocks.push((
                    addr.parse().unwrap(),
                    len.parse().unwrap(),
                    global,
                    row[1].clone(),
                ));
            }
        }
        blocks
    }

    fn bits(ip: IpAddr) -> (u128, u8) {
        match ip {
            IpAddr::V4(v4) => (u128::from(v4.to_bits()), 32),
            IpAddr::V6(v6) => (v6.to_bits(), 128),
        }
    }

    fn from_bits(bits: u128, width: u8) -> IpAddr {
        if width == 32 {
            IpAddr::V4(Ipv4Addr::from_bits(bits as u32))
        } else {
            IpAddr::V6(Ipv6Addr::from_bits(bits))
        }
    }

    /// What the registry itself says of `ip`: the verdict of its most specific entry, None if
    /// no entry holds it.
    fn registry_says(blocks: &[(IpAddr, u8, bool, String)], ip: IpAddr) -> Option<bool> {
        let (addr, width) = bits(ip);
        let holds = |start: u128, len: u8| {
            let shift = u32::from(width - len);
            addr.checked_shr(shift) == start.checked_shr(shift)
        };
        blocks
            .iter()
            .filter(|b| bits(b.0).1 == width && holds(bits(b.0).0, b.1))
            .max_by_key(|b| b.1)
            .map(|b| b.2)
    }

    /// Every registry entry, at its first, middle and last address, gets the registry's own
    /// verdict for that address (its most specific entry's); 64:ff9b::/96 additionally needs the
    /// embedded IPv4 address to be global by the IPv4 registry. And the tables hold exactly the
    /// registries' entries, with the same verdicts, plus the two blocks that are not in them.
    #[test]
    fn follows_the_registries_entry_by_entry() {
        let v4 = registry(V4_CSV);
        let v6 = registry(V6_CSV);
        assert!(
            v4.len() >= 26 && v6.len() >= 25,
            "{} {}",
            v4.len(),
            v6.len()
        );
        for (name, blocks) in [("IPv4", &v4), ("IPv6", &v6)] {
            for (first, len, _, entry) in blocks.iter() {
                let (start, width) = bits(*first);
                let size = 1u128
                    .checked_shl(u32::from(width - len))
                    .unwrap_or(0)
                    .wrapping_sub(1);
                assert_eq!(start & size, 0, "{name} {first}/{len} has host bits");
                for addr in [start, start + size / 2 + u128::from(size > 0), start + size] {
                    let ip = from_bits(addr, width);
                    let mut expected = registry_says(blocks, ip).unwrap();
                    if let IpAddr::V6(v6) = ip
                        && within(addr, NAT64.to_bits(), 96, 128)
                    {
                        let inner = IpAddr::V4(embedded_ipv4(v6).unwrap());
                        expected &= registry_says(&v4, inner).unwrap_or(true);
                    }
                    assert_eq!(
                        is_global(ip),
                        expected,
                        "{name} {ip} in {first}/{len} ({entry})"
                    );
                }
            }
        }
        let table: Vec<(IpAddr, u8, bool)> = V4
            .iter()
            .map(|&(p, l, g)| (IpAddr::V4(p), l, g))
            .chain(V6.iter().map(|&(p, l, g)| (IpAddr::V6(p), l, g)))
            .collect();
        let registries: Vec<(IpAddr, u8, bool)> =
            v4.iter().chain(&v6).map(|b| (b.0, b.1, b.2)).collect();
        let extras = [
            ("224.0.0.0".parse().unwrap(), 4, false),
            ("2000::".parse().unwrap(), 3, true),
        ];
        for entry in &registries {
            assert!(
                table.contains(entry),
                "registry entry {entry:?} is not in the table"
            );
        }
        for entry in &table {
            assert!(
                registries.contains(entry) || extras.contains(entry),
                "{entry:?} is in no registry"
            );
        }
    }

    #[test]
    fn refuses_and_accepts_the_usual_suspects() {
        let refused = [
            "198.18.0.1",
            "198.19.255.255",
            "240.0.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "239.255.255.255",
            "0.0.0.0",
            "127.0.0.1",
            "10.1.2.3",
            "169.254.169.254",
            "100.64.0.1",
            "192.0.0.8",
            "192.0.0.170",
            "192.88.99.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a00:1",
            "64:ff9b::c0a8:101",
            "64:ff9b::c000:201",
            "64:ff9b:1::808:808",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
            "2002:808:808::1",
            "::127.0.0.1",
            "::10.0.0.1",
            "::8.8.8.8",
            "::ffff:127.0.0.1",
            "::ffff:8.8.8.8",
            "::",
            "::1",
            "2001::1",
            "2001:db8::1",
            "3fff::1",
            "5f00::1",
            "100::1",
            "100:0:0:1::1",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "ff02::1",
            "ff0e::1",
            "4000::1",
            "2001:1::4",
        ];
        for a in refused {
            assert!(!is_global(a.parse().unwrap()), "{a} should be refused");
        }
        let global = [
            "8.8.8.8",
            "93.184.216.34",
            "1.1.1.1",
            "192.0.0.9",
            "192.0.0.10",
            "192.31.196.1",
            "192.52.193.1",
            "192.175.48.1",
            "223.255.255.255",
            "2606:2800:220:1::248",
            "2a00:1450::1",
            "64:ff9b::808:808",
            "2001:1::1",
            "2001:1::3",
            "2001:3::1",
            "2001:4:112::1",
            "2001:20::1",
            "2001:30::1",
            "2620:4f:8000::1",
            "3fff:1000::1",
        ];
        for a in global {
            assert!(is_global(a.parse().unwrap()), "{a} should be global");
        }
    }

    #[test]
    fn finds_the_embedded_ipv4_address() {
        let cases = [
            ("::ffff:127.0.0.1", Some("127.0.0.1")),
            ("::10.0.0.1", Some("10.0.0.1")),
            ("64:ff9b::c0a8:101", Some("192.168.1.1")),
            ("64:ff9b:1:c0a8:1:100::", Some("192.168.1.1")),
            ("2002:c0a8:101::1", Some("192.168.1.1")),
            ("::", None),
            ("::1", None),
            ("2001::1", None),
            ("2a00:1450::1", None),
        ];
        for (v6, v4) in cases {
            let v6: Ipv6Addr = v6.parse().unwrap();
            assert_eq!(embedded_ipv4(v6), v4.map(|a| a.parse().unwrap()), "{v6}");
        }
    }

    #[test]
    fn private_addresses() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_private(a.parse().unwrap()), "{a}");
        }
        for a in ["93.184.216.34", "2606:2800:220:1::248", "8.8.8.8"] {
            assert!(!is_private(a.parse().unwrap()), "{a}");
        }
    }
}

package dev.modelfs.nfs;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * The client networks a server answers: a list of CIDR blocks ({@code 10.0.0.0/8},
 * {@code 192.168.1.5}, {@code ::1/128}). An empty list allows every client.
 *
 * <p>Invariants: immutable; an IPv4 block never matches an IPv6 address and vice versa, except that
 * IPv4-mapped IPv6 addresses are matched as IPv4; parsing rejects malformed blocks.
 */
public final class AllowList {
    private record Block(byte[] net, int bits, String text) {}

    private final List<Block> blocks;

    private AllowList(List<Block> blocks) {
        this.blocks = List.copyOf(blocks);
    }

    public static final AllowList EVERYONE = new AllowList(List.of());

    /** Parses CIDR blocks; throws {@link IllegalArgumentException} naming the bad one. */
    public static AllowList parse(List<String> cidrs) {
        List<Block> out = new ArrayList<>();
        for (String raw : cidrs) {
            String c = raw.trim();
            if (c.isEmpty()) {
                continue;
            }
            int slash = c.indexOf('/');
            String host = slash < 0 ? c : c.substring(0, slash);
            if (!host.matches("\\d{1,3}(\\.\\d{1,3}){3}|[0-9a-fA-F:.]*:[0-9a-fA-F:.]*")) {     // literals only: no DNS lookups
                throw new IllegalArgumentException("not an address block: " + c);
            }
            byte[] net;
            try {
                net = InetAddress.getByName(host).getAddress();
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("not an address block: " + c);
            }
            int bits;
            try {
                bits = slash < 0 ? net.length * 8 : Integer.parseInt(c.substring(slash + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad prefix length in " + c);
            }
            if (bits < 0 || bits > net.length * 8) {
                throw new IllegalArgumentException("bad prefix length in " + c);
            }
            out.add(new Block(net, bits, c));
        }
        return new AllowList(out);
    }

    public boolean allowsEveryone() {
        return blocks.isEmpty();
    }

    /** The blocks as given, for the MOUNT export list. */
    public List<String> texts() {
        return blocks.stream().map(Block::text).toList();
    }

    public boolean allows(InetAddress address) {
        if (blocks.isEmpty()) {
            return true;
        }
        if (address == null) {
            return false;
        }
        byte[] a = address.getAddress();
        if (a.length == 16 && isV4Mapped(a)) {
            a = java.util.Arrays.copyOfRange(a, 12, 16);
        }
        for (Block b : blocks) {
            if (b.net().length == a.length && prefixMatches(b.net(), a, b.bits())) {
                return true;
            }
        }
        return false;
    }

    private static boolean isV4Mapped(byte[] a) {
        for (int i = 0; i < 10; i++) {
            if (a[i] != 0) {
                return false;
            }
        }
        return a[10] == (byte) 0xff && a[11] == (byte) 0xff;
    }

    private static boolean prefixMatches(byte[] net, byte[] a, int bits) {
        int full = bits / 8;
        for (int i = 0; i < full; i++) {
            if (net[i] != a[i]) {
                return false;
            }
        }
        int rest = bits % 8;
        if (rest == 0) {
            return true;
        }
        int mask = (0xff << (8 - rest)) & 0xff;
        return (net[full] & mask) == (a[full] & mask);
    }
}

package dev.modelfs.nfs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

class AllowListTest {
    static InetAddress ip(String s) throws Exception {
        return InetAddress.getByName(s);
    }

    @Test
    void blocksMatchByPrefix() throws Exception {
        AllowList a = AllowList.parse(List.of("10.1.0.0/16", "192.168.7.5", "fd00::/8", "172.16.0.0/12"));
        assertTrue(a.allows(ip("10.1.255.3")));
        assertFalse(a.allows(ip("10.2.0.1")));
        assertTrue(a.allows(ip("192.168.7.5")));
        assertFalse(a.allows(ip("192.168.7.6")));
        assertTrue(a.allows(ip("172.31.0.1")));
        assertFalse(a.allows(ip("172.32.0.1")));
        assertTrue(a.allows(ip("fd12::1")));
        assertFalse(a.allows(ip("fe80::1")));
        assertTrue(a.allows(ip("::ffff:10.1.2.3")), "IPv4-mapped addresses match IPv4 blocks");
        assertFalse(a.allows(null));
    }

    @Test
    void emptyAllowsEveryoneAndBadBlocksAreRejected() throws Exception {
        assertTrue(AllowList.parse(List.of()).allows(ip("8.8.8.8")));
        assertTrue(AllowList.parse(List.of("0.0.0.0/0")).allows(ip("8.8.8.8")));
        for (String bad : List.of("10.0.0.0/33", "example.com", "dead.beef", "10.0.0.0/x", "::/129")) {
            assertThrows(IllegalArgumentException.class, () -> AllowList.parse(List.of(bad)), bad);
        }
    }
}

package dev.modelfs.nfs;

import java.io.IOException;
import java.util.logging.Logger;
import org.dcache.oncrpc4j.xdr.Xdr;
import org.glassfish.grizzly.Buffer;
import org.glassfish.grizzly.filterchain.BaseFilter;
import org.glassfish.grizzly.filterchain.FilterChainContext;
import org.glassfish.grizzly.filterchain.NextAction;
import org.glassfish.grizzly.memory.BuffersBuffer;

/**
 * Cuts the TCP byte stream into RPC records (RFC 5531 §11, record marking) and hands each checked call
 * on as an {@link Xdr}: the bounded replacement of oncrpc4j's {@code RpcMessageParserTCP}, which keeps
 * buffering for as long as a fragment header claims (up to 2 GiB per connection).
 *
 * <p>Invariants: a connection never buffers more than {@link #MAX_RECORD} bytes of one record (fragment
 * headers included): a record that would be larger closes the connection, logged once per peer; a record
 * {@link CallHeaderCheck} refuses is answered with MSG_DENIED / AUTH_ERROR / AUTH_BADCRED (or, if not a
 * call, dropped) and never decoded; records after it on the connection are still served.
 */
final class RecordParser extends BaseFilter {
    private static final Logger LOG = Logger.getLogger(RecordParser.class.getName());
    /** The largest call record accepted: a 64 KiB WRITE (FSINFO wtmax) plus its headers. */
    static final int MAX_RECORD = Nfs3.WTMAX + 4096;
    private static final int LAST_FRAGMENT = 0x80000000;
    private static final int REPLY = 1, MSG_DENIED = 1, AUTH_ERROR = 1, AUTH_BADCRED = 2;

    private final PeerLog peers;

    RecordParser(PeerLog peers) {
        this.peers = peers;
    }

    @Override
    public NextAction handleRead(FilterChainContext ctx) throws IOException {
        Buffer in = ctx.getMessage();
        if (in == null) {
            return ctx.getStopAction();
        }
        int start = in.position();
        int p = start;
        boolean last = false;
        while (!last) {
            if (in.limit() - p < 4) {
                return ctx.getStopAction(in);                   // wait for the rest
            }
            int marker = in.getInt(p);
            long size = marker & 0x7fffffffL;
            if ((p - start) + 4 + size > MAX_RECORD) {
                peers.once(ctx.getConnection(), "closed connection: an RPC record of more than " + MAX_RECORD + " bytes");
                ctx.getConnection().closeSilently();
                return ctx.getStopAction();
            }
            if (in.limit() - p - 4 < size) {
                return ctx.getStopAction(in);
            }
            p += 4 + (int) size;
            last = (marker & LAST_FRAGMENT) != 0;
        }
        Buffer record = assemble(in, start, p, ctx);
        in.position(p);
        Buffer rest = in.hasRemaining() ? in.split(p) : null;
        switch (CallHeaderCheck.check(record)) {
            case CALL -> {
                ctx.setMessage(new Xdr(record, ctx.getMemoryManager()));
                return ctx.getInvokeAction(rest);
            }
            case BAD_CREDENTIAL -> {
                peers.once(ctx.getConnection(), "denied an RPC call with a malformed or oversized credential");
                deny(ctx, record.getInt(record.position()));
            }
            case DROP -> { }
        }
        if (rest == null) {
            return ctx.getStopAction();
        }
        ctx.setMessage(rest);
        return ctx.getRerunFilterAction();
    }

    /** The record's fragments without their headers, as one buffer (a composite only for several fragments). */
    private static Buffer assemble(Buffer in, int start, int end, FilterChainContext ctx) {
        int first = in.getInt(start) & 0x7fffffff;
        if (start + 4 + first == end) {
            return in.slice(start + 4, end);
        }
        BuffersBuffer many = BuffersBuffer.create(ctx.getMemoryManager());
        for (int p = start; p < end; ) {
            int size = in.getInt(p) & 0x7fffffff;
            many.append(in.slice(p + 4, p + 4 + size));
            p += 4 + size;
        }
        return many;
    }

    /** Writes the RFC 5531 rejection {@code MSG_DENIED AUTH_ERROR AUTH_BADCRED} for {@code xid}. */
    private static void deny(FilterChainContext ctx, int xid) {
        Buffer b = ctx.getMemoryManager().allocate(24);
        b.putInt(LAST_FRAGMENT | 20).putInt(xid).putInt(REPLY).putInt(MSG_DENIED).putInt(AUTH_ERROR).putInt(AUTH_BADCRED);
        b.flip();
        ctx.write(b);
    }
}

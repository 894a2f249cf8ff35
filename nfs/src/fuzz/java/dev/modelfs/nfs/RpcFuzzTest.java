package dev.modelfs.nfs;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.modelfs.serve.ServePolicy;
import dev.modelfs.serve.ServedTree;
import dev.modelfs.serve.StandardViews;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.CompletionHandler;
import java.nio.file.Files;
import java.nio.file.Path;
import org.dcache.oncrpc4j.rpc.ReplyQueue;
import org.dcache.oncrpc4j.rpc.RpcAuthError;
import org.dcache.oncrpc4j.rpc.RpcAuthException;
import org.dcache.oncrpc4j.rpc.RpcAuthStat;
import org.dcache.oncrpc4j.rpc.RpcCall;
import org.dcache.oncrpc4j.rpc.RpcDispatchable;
import org.dcache.oncrpc4j.rpc.RpcTransport;
import org.dcache.oncrpc4j.xdr.Xdr;
import org.glassfish.grizzly.Buffer;
import org.glassfish.grizzly.memory.Buffers;
import org.glassfish.grizzly.memory.MemoryManager;

/**
 * Jazzer fuzz target for what a network peer sends: any bytes as one RPC call record, through
 * {@link CallHeaderCheck} and, when it passes, oncrpc4j's call decoding and the NFS or MOUNT program,
 * as {@code RpcProtocolFilter} and {@code RpcDispatcher} run them. The contract: a record is refused, or
 * decoded and answered exactly as the dispatcher would (an an {@link IOException}
 * is its GARBAGE_ARGS, {@code OncRpcException} being one); nothing else is thrown, no call is left unanswered, nothing allocates what a
 * length field claims (Jazzer's heap limit catches that). Under {@code ./test} it replays the seeds in
 * {@code src/fuzz/resources/dev/modelfs/nfs/RpcFuzzTestInputs/}; {@code JAZZER_FUZZ=1} fuzzes.
 */
class RpcFuzzTest {
    private static final MemoryManager MM = MemoryManager.DEFAULT_MEMORY_MANAGER;
    private static final RpcDispatchable NFS;
    private static final RpcDispatchable MOUNT;

    static {
        try {
            Path store = Files.createTempDirectory("modelfs-rpc-fuzz");
            Files.createDirectories(store.resolve("blobs"));
            Files.createDirectories(store.resolve("manifests"));
            store.toFile().deleteOnExit();
            ServedTree served = ServedTree.open(new OllamaStore(store), StandardViews.all(), 1 << 20, 60_000);
            ServePolicy policy = served.policy(0, 0);
            HandleResolver handles = new HandleResolver(served.tree());
            NFS = new Nfs3Program(handles, new OpenFiles(policy, 4), AllowList.EVERYONE, policy, new Wire.Shown(policy, 1));
            MOUNT = new MountProgram(handles, AllowList.EVERYONE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @FuzzTest(maxDuration = "60s")
    void callRecord(byte[] data) throws Exception {
        Buffer record = Buffers.wrap(MM, data);
        if (CallHeaderCheck.check(record) != CallHeaderCheck.Verdict.CALL) {
            return;                                            // refused before any decoding
        }
        Replies replies = new Replies();
        Xdr xdr = new Xdr(record, MM);
        xdr.beginDecoding();
        int xid = xdr.xdrDecodeInt();
        xdr.xdrDecodeInt();                                    // message type: CALL, checked above
        RpcCall call = new RpcCall(xid, xdr, replies);
        try {
            call.accept();                                     // header and credential; rejections are replies
        } catch (IOException refused) {                   // an OncRpcException too
            return;
        }
        if (replies.count > 0) {
            return;                                            // rejected (RPC version, auth): answered
        }
        RpcDispatchable program = call.getProgram() == MountProgram.PROGRAM ? MOUNT : NFS;
        try {
            program.dispatchOncRpcCall(call);
        } catch (IOException garbage) {                   // an OncRpcException too
            return;                                            // the dispatcher answers GARBAGE_ARGS
        }
        if (replies.count != 1) {
            throw new AssertionError(replies.count + " replies to " + call);
        }
    }

    /** The transport of one fuzzed call: counts the replies sent on it. */
    private static final class Replies implements RpcTransport {
        int count;

        @Override
        public <A> void send(Xdr xdr, A attachment, CompletionHandler<Integer, ? super A> handler) {
            count++;
        }

        @Override
        public ReplyQueue getReplyQueue() {
            return null;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public InetSocketAddress getLocalSocketAddress() {
            return new InetSocketAddress("127.0.0.1", 2049);
        }

        @Override
        public InetSocketAddress getRemoteSocketAddress() {
            return new InetSocketAddress("127.0.0.1", 1023);
        }

        @Override
        public RpcTransport getPeerTransport() {
            return this;
        }

        @Override
        public void startTLS() throws RpcAuthException {
            throw new RpcAuthException("SSL is not configured", new RpcAuthError(RpcAuthStat.AUTH_FAILED));   // as Grizzly's
        }

        @Override
        public boolean isTLS() {
            return false;
        }
    }
}

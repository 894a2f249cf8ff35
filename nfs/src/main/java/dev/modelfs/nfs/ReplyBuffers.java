package dev.modelfs.nfs;

import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.glassfish.grizzly.memory.ByteBufferWrapper;

/**
 * A fixed pool of direct buffers that READ data is read into and handed to the transport as they are
 * (oncrpc4j's shallow encoding): the file's bytes go from the blob into the buffer once, and the
 * socket writes them from there.
 *
 * <p>Invariants: at most {@code count} buffers of {@code size} bytes exist; a buffer is in the pool
 * or lent to exactly one reply; the transport gives it back when the reply is written ({@link
 * Lent#dispose()}, once); when all are lent {@link #take()} answers null and the caller encodes the
 * data into the reply buffer instead.
 */
final class ReplyBuffers {
    private final ArrayBlockingQueue<ByteBuffer> free;

    ReplyBuffers(int count, int size) {
        free = new ArrayBlockingQueue<>(count);
        for (int i = 0; i < count; i++) {
            free.add(ByteBuffer.allocateDirect(size));
        }
    }

    /** A cleared buffer, or null when every buffer is lent. */
    ByteBuffer take() {
        ByteBuffer b = free.poll();
        return b == null ? null : b.clear();
    }

    void give(ByteBuffer b) {
        free.offer(b);
    }

    /** A buffer lent to the transport: disposing it (after the write) returns it to the pool. */
    final class Lent extends ByteBufferWrapper {
        private final ByteBuffer pooled;
        private final AtomicBoolean returned = new AtomicBoolean();

        Lent(ByteBuffer pooled) {
            super(pooled);
            this.pooled = pooled;
            allowBufferDispose(true);
        }

        @Override
        public void dispose() {
            if (returned.compareAndSet(false, true)) {
                give(pooled);
            }
        }
    }
}

package dev.modelfs.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.FormatException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class ManifestParserTest {
    static final String D1 = "a".repeat(64);
    static final String D2 = "B".repeat(64);
    static final ModelName NAME = ModelName.parse("m").orElseThrow();

    static Manifest parse(String json) {
        return ManifestParser.parse(NAME, json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void parsesLayersConfigAndDigestOfRawBytes() throws Exception {
        String json = "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
                + "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" + D1 + "\",\"size\":5},"
                + "\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:" + D2 + "\",\"size\":123,\"from\":\"x\"},"
                + "{\"mediaType\":\"application/vnd.ollama.image.tensor\",\"digest\":\"sha256:" + D1 + "\",\"size\":9,\"name\":\"a.weight\",\"unknown\":[1,2]}],"
                + "\"annotations\":{\"k\":\"v\"}}\n";
        Manifest m = parse(json);
        assertEquals(2, m.schemaVersion());
        assertEquals(MediaType.Kind.CONFIG, m.config().kind());
        assertEquals(D1, m.config().digest().orElseThrow().hex());
        assertEquals(2, m.layers().size());
        assertEquals(MediaType.Kind.MODEL, m.layers().get(0).kind());
        assertEquals(123, m.layers().get(0).size());
        assertEquals("x", m.layers().get(0).from());
        assertEquals("a.weight", m.layers().get(1).name());
        assertEquals(5 + 123 + 9, m.totalSize());
        String expected = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(json.getBytes(StandardCharsets.UTF_8)));
        assertEquals(expected, m.digest().hex());
    }

    @Test
    void mediaTypeParametersNameTensorLayers() {
        Manifest m = parse("{\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.tensor; name=foo.weight; dtype=BF16; shape=4,8\","
                + "\"digest\":\"sha256:" + D1 + "\",\"size\":1}]}");
        Layer l = m.layers().getFirst();
        assertEquals(MediaType.Kind.TENSOR, l.kind());
        assertEquals("foo.weight", l.name());
        assertEquals("BF16", l.mediaType().params().get("dtype"));
        assertEquals("4,8", l.mediaType().params().get("shape"));
    }

    @Test
    void legacyAndUnknownMediaTypes() {
        Manifest m = parse("{\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.prompt\",\"digest\":\"sha256:" + D1 + "\",\"size\":1},"
                + "{\"mediaType\":\"application/x-something\",\"digest\":\"sha256:" + D1 + "\",\"size\":1}]}");
        assertEquals(MediaType.Kind.PROMPT, m.layers().get(0).kind());
        assertEquals(MediaType.Kind.UNKNOWN, m.layers().get(1).kind());
    }

    @Test
    void emptyDigestMeansNoBlob() {
        Manifest m = parse("{\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"\",\"size\":0},\"layers\":[]}");
        assertTrue(m.config().digest().isEmpty());
        assertNull(m.first(MediaType.Kind.MODEL));
    }

    @Test
    void rejectsHostileOrBrokenManifests() {
        assertThrows(FormatException.class, () -> parse("{not json"));
        assertThrows(FormatException.class, () -> parse("[1,2]"));
        assertThrows(FormatException.class, () -> parse("{\"layers\":{}}"));
        assertThrows(FormatException.class, () -> parse("{\"layers\":[{\"digest\":\"sha256:../../etc/passwd\",\"size\":1}]}"));
        assertThrows(FormatException.class, () -> parse("{\"layers\":[{\"digest\":\"sha256:" + D1 + "\",\"size\":-1}]}"));
        assertThrows(FormatException.class, () -> parse("{\"layers\":[{\"digest\":\"sha256:" + D1 + "\",\"size\":1.5}]}"));
        assertThrows(FormatException.class, () -> parse("{\"layers\":[7]}"));
    }

    @Test
    void digestsNeverEscapeBlobs() {
        assertTrue(Digest.parse("sha256:" + "g".repeat(64)).isEmpty());
        assertTrue(Digest.parse("sha256:/" + "a".repeat(63)).isEmpty());
        assertTrue(Digest.parse("sha512:" + "a".repeat(64)).isEmpty());
        assertEquals("sha256-" + D1, Digest.parse("sha256-" + D1).orElseThrow().fileName());
    }
}

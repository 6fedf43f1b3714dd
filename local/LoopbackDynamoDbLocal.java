// Starts Amazon's DynamoDB Local listening on 127.0.0.1 only. The jar's own launcher binds
// Jetty to every interface and has no option for the host, so this builds the server with
// the jar's command line (same flags), sets the host of its connector, then starts it.
// Run as a single-file program: java -cp DynamoDBLocal.jar LoopbackDynamoDbLocal.java <flags>
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    Connector[] connectors = server.getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind to 127.0.0.1");
    for (Connector connector : connectors) ((ServerConnector) connector).setHost("127.0.0.1");
    proxy.start();
    System.out.println("DynamoDB Local listening on 127.0.0.1 only");
  }
}

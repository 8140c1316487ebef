package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolc/toolc/plugins"
	pb "github.com/toolc/toolc/plugins/proto/toolc/plugin/v1"
)

// resultToPB converts a result for a host of protocol version.
func resultToPB(r *plugins.Result, version int) (*pb.Result, error) {
	if version < 3 && (len(r.InputRequests) > 0 || r.MissingCapability != "") {
		// Only a host of version 3 passes questions on, and no asks
		// reach an older host's plugin (it sends no Input): this is a
		// handler that built such a result itself.
		r = plugins.Errorf("the handler needs the client's answers, which a host of plugin protocol %d cannot ask for; upgrade toolc", version)
	}
	out := &pb.Result{IsError: r.IsError, MissingCapability: r.MissingCapability}
	for _, q := range r.InputRequests {
		out.InputRequests = append(out.InputRequests, &pb.InputRequest{Id: validUTF8(q.ID), Method: q.Method, ParamsJson: q.Params})
	}
	content := r.Content
	if r.StructuredContent != nil {
		b, ok := r.StructuredContent.(json.RawMessage)
		if !ok {
			var err error
			if b, err = json.Marshal(r.StructuredContent); err != nil {
				return nil, fmt.Errorf("encode structured content: %w", err)
			}
		}
		if !isObject(b) {
			return nil, fmt.Errorf("structured content must be a JSON object, not %.40s", b)
		}
		out.StructuredContentJson = b
		// The text copy that JSON makes need not cross the boundary a
		// second time: the host rebuilds it from the structured content.
		if version >= 2 && len(content) > 0 && content[0].Type == "text" && content[0].Text == string(b) {
			out.StructuredAsText = true
			content = content[1:]
		}
	}
	if len(content) > 0 {
		out.Content = make([]*pb.Content, 0, len(content))
	}
	for i, c := range content {
		pc, err := contentToPB(c)
		if err != nil {
			if out.StructuredAsText {
				i++
			}
			return nil, fmt.Errorf("content[%d]: %w", i, err)
		}
		out.Content = append(out.Content, pc)
	}
	return out, nil
}

func contentToPB(c plugins.Content) (*pb.Content, error) {
	pc, err := contentKindToPB(c)
	if pc != nil {
		pc.Role = validUTF8(c.Role)
	}
	return pc, err
}

func contentKindToPB(c plugins.Content) (*pb.Content, error) {
	switch c.Type {
	case "text":
		return &pb.Content{Kind: &pb.Content_Text{Text: &pb.TextContent{Text: validUTF8(c.Text)}}}, nil
	case "image":
		return &pb.Content{Kind: &pb.Content_Image{Image: &pb.ImageContent{Data: c.Data, MimeType: validUTF8(c.MIMEType)}}}, nil
	case "audio":
		return &pb.Content{Kind: &pb.Content_Audio{Audio: &pb.AudioContent{Data: c.Data, MimeType: validUTF8(c.MIMEType)}}}, nil
	case "resource_link":
		return &pb.Content{Kind: &pb.Content_ResourceLink{ResourceLink: &pb.ResourceLink{
			Uri: validUTF8(c.URI), Name: validUTF8(c.Name), Title: validUTF8(c.Title), Description: validUTF8(c.Description),
			MimeType: validUTF8(c.MIMEType), Size: c.Size,
		}}}, nil
	case "resource":
		if c.Resource == nil {
			return nil, fmt.Errorf("resource content without a Resource")
		}
		rc := &pb.ResourceContents{Uri: validUTF8(c.Resource.URI), MimeType: validUTF8(c.Resource.MIMEType)}
		if c.Resource.Blob != nil {
			rc.Contents = &pb.ResourceContents_Blob{Blob: c.Resource.Blob}
		} else {
			rc.Contents = &pb.ResourceContents_Text{Text: validUTF8(c.Resource.Text)}
		}
		return &pb.Content{Kind: &pb.Content_Resource{Resource: &pb.EmbeddedResource{Resource: rc}}}, nil
	}
	return nil, fmt.Errorf("unknown content type %q", c.Type)
}

func resultFromPB(r *pb.Result) *plugins.Result {
	out := &plugins.Result{IsError: r.IsError, MissingCapability: r.MissingCapability}
	for _, q := range r.InputRequests {
		out.InputRequests = append(out.InputRequests, plugins.InputRequest{ID: q.Id, Method: q.Method, Params: q.ParamsJson})
	}
	n := len(r.Content)
	if len(r.StructuredContentJson) > 0 {
		out.StructuredContent = json.RawMessage(r.StructuredContentJson)
		if r.StructuredAsText {
			n++
		}
	}
	if n > 0 {
		out.Content = make([]plugins.Content, 0, n)
	}
	if r.StructuredAsText && len(r.StructuredContentJson) > 0 {
		out.Content = append(out.Content, plugins.TextContent(string(r.StructuredContentJson)))
	}
	for _, c := range r.Content {
		out.Content = append(out.Content, contentFromPB(c))
	}
	return out
}

func contentFromPB(c *pb.Content) plugins.Content {
	out := contentKindFromPB(c)
	out.Role = c.GetRole()
	return out
}

func contentKindFromPB(c *pb.Content) plugins.Content {
	switch k := c.Kind.(type) {
	case *pb.Content_Text:
		return plugins.TextContent(k.Text.GetText())
	case *pb.Content_Image:
		return plugins.ImageContent(k.Image.GetData(), k.Image.GetMimeType())
	case *pb.Content_Audio:
		return plugins.AudioContent(k.Audio.GetData(), k.Audio.GetMimeType())
	case *pb.Content_ResourceLink:
		l := k.ResourceLink
		return plugins.Content{Type: "resource_link", URI: l.GetUri(), Name: l.GetName(), Title: l.GetTitle(),
			Description: l.GetDescription(), MIMEType: l.GetMimeType(), Size: l.Size}
	case *pb.Content_Resource:
		rc := k.Resource.GetResource()
		if blob, ok := rc.GetContents().(*pb.ResourceContents_Blob); ok {
			return plugins.EmbeddedBlob(rc.GetUri(), rc.GetMimeType(), blob.Blob)
		}
		return plugins.EmbeddedText(rc.GetUri(), rc.GetMimeType(), rc.GetText())
	}
	// A newer plugin sent a kind this host does not know; keep the call
	// useful rather than failing it.
	return plugins.TextContent(fmt.Sprintf("[unsupported content from plugin: %v]", c))
}

func eventToPB(e plugins.Event) *pb.CallEvent {
	switch {
	case e.Progress != nil:
		p := e.Progress
		return &pb.CallEvent{Event: &pb.CallEvent_Progress{Progress: &pb.Progress{Progress: p.Progress, Total: p.Total, Message: validUTF8(p.Message)}}}
	case e.Log != nil:
		l := e.Log
		return &pb.CallEvent{Event: &pb.CallEvent_Log{Log: &pb.Log{Level: validUTF8(l.Level), Logger: validUTF8(l.Logger), Message: validUTF8(l.Message)}}}
	}
	return nil
}

// sizeBound bounds from above the encoded size of a CallEvent holding r,
// cheaply, so that only a result near MaxMessageSize is measured exactly:
// r's strings and bytes, plus 64 bytes for each content block's tags and
// lengths (a resource link, the block with the most fields, needs 53) and
// 64 for those of the result and the event (16).
func sizeBound(r *pb.Result) int {
	n := 64 + len(r.StructuredContentJson) + len(r.MissingCapability)
	for _, q := range r.InputRequests {
		n += 64 + len(q.Id) + len(q.Method) + len(q.ParamsJson)
	}
	for _, c := range r.Content {
		n += 64 + len(c.Role)
		switch k := c.Kind.(type) {
		case *pb.Content_Text:
			n += len(k.Text.GetText())
		case *pb.Content_Image:
			n += len(k.Image.GetData()) + len(k.Image.GetMimeType())
		case *pb.Content_Audio:
			n += len(k.Audio.GetData()) + len(k.Audio.GetMimeType())
		case *pb.Content_ResourceLink:
			l := k.ResourceLink
			n += len(l.GetUri()) + len(l.GetName()) + len(l.GetTitle()) + len(l.GetDescription()) + len(l.GetMimeType())
		case *pb.Content_Resource:
			rc := k.Resource.GetResource()
			n += len(rc.GetUri()) + len(rc.GetMimeType()) + len(rc.GetText()) + len(rc.GetBlob())
		}
	}
	return n
}

func inputToPB(in *plugins.Input) *pb.Input {
	out := &pb.Input{Elicitation: in.Elicitation, Sampling: in.Sampling, Roots: in.Roots}
	for _, a := range in.Answers {
		out.Answers = append(out.Answers, &pb.Answer{Id: a.ID, ParamsSha256: a.ParamsSHA256, ResultJson: a.Result})
	}
	return out
}

func inputFromPB(in *pb.Input) *plugins.Input {
	out := &plugins.Input{Elicitation: in.Elicitation, Sampling: in.Sampling, Roots: in.Roots}
	for _, a := range in.Answers {
		out.Answers = append(out.Answers, plugins.Answer{ID: a.Id, ParamsSHA256: a.ParamsSha256, Result: a.ResultJson})
	}
	return out
}

// callerToPB converts a caller for the wire. A token's claims are JSON
// strings, so UTF-8 already, unless an embedder's own caller is not.
func callerToPB(c plugins.Caller) *pb.Caller {
	out := &pb.Caller{Subject: validUTF8(c.Subject), ClientId: validUTF8(c.ClientID)}
	if len(c.Scopes) > 0 {
		out.Scopes = make([]string, len(c.Scopes))
		for i, s := range c.Scopes {
			out.Scopes[i] = validUTF8(s)
		}
	}
	return out
}

// validUTF8 replaces the bytes of s that are not UTF-8 with U+FFFD. A
// protobuf string must be UTF-8, and a handler's text often is not quite
// (a file name, a truncated buffer): gRPC would refuse to send the whole
// result, and the host could only report that it broke.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// isObject reports whether b holds a JSON object, as structured content
// must.
func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

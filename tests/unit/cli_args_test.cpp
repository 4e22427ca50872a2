#include <gtest/gtest.h>

#include "cli_args.h"

namespace torch2onnx::cli {
namespace {

TEST(CliArgs, ParsesExportWithOptions) {
  Command c = parse({"export", "m.pt", "-o", "m.onnx", "--input", "1x3x8x8", "--opset", "11", "--input-names", "a,b",
                     "--output-names=y", "--no-export-params", "--keep-initializers-as-inputs", "--no-constant-folding",
                     "--verbose", "--keep-doc-strings"});
  EXPECT_EQ(c.name, "export");
  EXPECT_EQ(c.model, "m.pt");
  EXPECT_EQ(c.output, "m.onnx");
  EXPECT_EQ(c.inputs, std::vector<std::string>{"1x3x8x8"});
  EXPECT_EQ(c.options.opset_version, 11);
  EXPECT_EQ(c.options.input_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c.options.output_names, std::vector<std::string>{"y"});
  EXPECT_FALSE(c.options.export_params);
  EXPECT_TRUE(c.options.keep_initializers_as_inputs);
  EXPECT_FALSE(c.options.do_constant_folding);
  EXPECT_TRUE(c.options.verbose);
  EXPECT_TRUE(c.options.keep_doc_strings);
}

TEST(CliArgs, DynamicAxes) {
  Command c = parse({"export", "m.pt", "-o", "m.onnx", "--input", "2x3", "--dynamic-axes",
                     R"({"x": {"0": "my_custom_axis_name"}, "sum": [0, -1], "y": {}})"});
  const auto& d = c.options.dynamic_axes;
  ASSERT_EQ(d.size(), 3u);
  ASSERT_EQ(d.at("x").size(), 1u);
  EXPECT_EQ(d.at("x")[0].axis, 0);
  EXPECT_EQ(d.at("x")[0].name, "my_custom_axis_name");
  ASSERT_EQ(d.at("sum").size(), 2u);
  EXPECT_EQ(d.at("sum")[1].axis, -1);
  EXPECT_EQ(d.at("sum")[1].name, "");
  EXPECT_TRUE(d.at("y").empty());
  for (const char* bad : {"", "{", "[0]", R"({"x": [a]})", R"({"x": {"zero": "n"}})", R"({"x": [0]} extra)"}) {
    EXPECT_THROW(parse({"export", "m.pt", "-o", "m.onnx", "--input", "2", "--dynamic-axes", bad}), Error) << bad;
  }
}

TEST(CliArgs, HelpAfterACommand) {
  EXPECT_EQ(parse({"export", "--help"}).name, "help");
  EXPECT_EQ(parse({"check", "m.pt", "-h"}).name, "help");
  EXPECT_EQ(parse({"--help"}).name, "help");
}

TEST(CliArgs, UsageErrors) {
  auto usage = [](std::vector<std::string> argv) {
    try {
      parse(argv);
    } catch (const Error& e) {
      return e.kind() == Error::Kind::Usage;
    }
    return false;
  };
  EXPECT_TRUE(usage({}));
  EXPECT_TRUE(usage({"frobnicate"}));
  EXPECT_TRUE(usage({"export", "m.pt"}));                                  // no -o
  EXPECT_TRUE(usage({"export", "-o", "x.onnx", "--input", "1"}));          // no model
  EXPECT_TRUE(usage({"export", "m.pt", "-o", "x.onnx"}));                  // no inputs
  EXPECT_TRUE(usage({"export", "m.pt", "-o", "x.onnx", "--input", "1", "--opset", "abc"}));
  EXPECT_TRUE(usage({"export", "m.pt", "-o", "x.onnx", "--input", "1", "--bogus"}));
  EXPECT_TRUE(usage({"export", "m.pt", "-o", "x.onnx", "--args", "a.pt", "--input", "1"}));
  EXPECT_TRUE(usage({"export", "m.pt", "-o"}));
}

}  // namespace
}  // namespace torch2onnx::cli
